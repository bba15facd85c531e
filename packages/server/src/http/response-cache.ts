import type { FastifyInstance, onRequestHookHandler, onSendHookHandler } from 'fastify';
import { withHook } from './route-hooks.js';
import { sendSerialized } from './serialized.js';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/scopes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** GET answers that depend only on the URL and the calling key may be served from cache. */
    cache?: boolean;
  }
  interface FastifyRequest {
    /** The cache entry a miss will fill, and the cache generation it started in. */
    cached: { key: string; generation: number } | null;
  }
}

/**
 * Serialised 200 answers of read endpoints, keyed by the key's grants and the URL. Any local
 * write bumps the generation and empties it at once; the short TTL bounds staleness for
 * writes made on other nodes of a cluster.
 *
 * An answer is kept only when its URL is asked for the second time within ADMIT_WINDOW_MS (a
 * doorkeeper, as in TinyLFU): a client walking the archive asks for every URL once, and keeping
 * each of those bodies would only push hot answers out and hand the garbage collector a stream
 * of promoted strings that are never read (bench/history/2026-11-24.md "bench/rest walk").
 */
export class ResponseCache {
  private entries = new Map<string, { body: string; at: number; generation: number }>();
  /** When each recently missed key was first asked for. */
  private seen = new Map<string, number>();
  private generation = 0;
  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = 1000,
    private readonly maxEntries = 5000,
    private readonly admitWindowMs = 60_000,
    private readonly maxSeen = 20_000,
  ) {}

  /** Called by every write path (events, plays, status changes, imports). */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  keyFor(p: Principal, url: string): string {
    return `${p.keyId}|${p.products.join(',')}|${p.sports?.join(',') ?? '*'}|${p.leagues?.join(',') ?? '*'}|${url}`;
  }

  get(key: string): string | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.generation !== this.generation) {
      this.entries.delete(key);
      return undefined;
    }
    // Past its TTL an entry is kept (until a write or eviction) for `stale`.
    if (this.clock.now() - e.at > this.ttlMs) return undefined;
    return e.body;
  }

  /**
   * An entry past its TTL, no older than `maxAgeMs`, with its age in whole seconds: what a read
   * answers while the database is known down (no local write has happened since it was made).
   */
  stale(key: string, maxAgeMs: number): { body: string; ageS: number } | undefined {
    const e = this.entries.get(key);
    if (!e || e.generation !== this.generation) return undefined;
    const age = this.clock.now() - e.at;
    return age <= maxAgeMs ? { body: e.body, ageS: Math.floor(age / 1000) } : undefined;
  }

  /** Whether a miss on `key` should keep its answer: the key was missed before, recently. */
  admits(key: string): boolean {
    const now = this.clock.now();
    const first = this.seen.get(key);
    if (first !== undefined && now - first <= this.admitWindowMs) return true;
    if (this.seen.size >= this.maxSeen) this.seen.clear();
    this.seen.set(key, now);
    return false;
  }

  set(key: string, body: string, generation: number): void {
    // A write that landed while this answer was being built makes it stale already.
    if (generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value ?? '');
    this.entries.set(key, { body, at: this.clock.now(), generation });
  }

  /** Entries held now (some may have expired and not been looked up since). */
  get size(): number {
    return this.entries.size;
  }

  get currentGeneration(): number {
    return this.generation;
  }
}

/** How old an answer may be to be served while the database is known down. */
const SERVE_STALE_FOR_MS = 10 * 60_000;

/**
 * Declared per route: only routes with `config.cache` (GETs whose answer depends only on the URL
 * and the key) carry these hooks, so no other request pays for them. Route hooks run after the
 * global ones, so the key is authenticated first and a hit answers before validation and the
 * handler. Callback hooks: no promise per request on the hottest path.
 */
export function registerResponseCache(app: FastifyInstance, cache: ResponseCache, storeDown: () => boolean = () => false): void {
  app.decorateRequest('cached', null);
  const lookup: onRequestHookHandler = (request, reply, done) => {
    if (request.method !== 'GET' || !request.principal) return done();
    const key = cache.keyFor(request.principal, request.url);
    const hit = cache.get(key);
    if (hit !== undefined) {
      sendSerialized(reply, hit);
      return;
    }
    // The database known down: the last answer this node gave, with its Age, rather than a 503
    // after the connection bounds (docs/operations.md, "Failures and what svc does").
    const stale = storeDown() ? cache.stale(key, SERVE_STALE_FOR_MS) : undefined;
    if (stale) {
      reply.header('Age', String(stale.ageS));
      sendSerialized(reply, stale.body);
      return;
    }
    if (cache.admits(key)) request.cached = { key, generation: cache.currentGeneration };
    done();
  };
  const keep: onSendHookHandler = (request, reply, payload, done) => {
    const pending = request.cached;
    if (pending && reply.statusCode === 200 && typeof payload === 'string') cache.set(pending.key, payload, pending.generation);
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.cache) return;
    route.onRequest = withHook(route.onRequest, lookup);
    route.onSend = withHook(route.onSend, keep);
  });
}
