import type { FastifyInstance } from 'fastify';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/scopes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** GET answers that depend only on the URL and the calling key may be served from cache. */
    cache?: boolean;
  }
  interface FastifyRequest {
    cacheKey: string | null;
  }
}

/**
 * Serialised 200 answers of read endpoints, keyed by the key's grants and the URL. Any local
 * write bumps the generation and empties it at once; the short TTL bounds staleness for
 * writes made on other nodes of a cluster.
 */
export class ResponseCache {
  private entries = new Map<string, { body: string; at: number; generation: number }>();
  private generation = 0;
  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = 1000,
    private readonly maxEntries = 5000,
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
    if (e.generation !== this.generation || this.clock.now() - e.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.body;
  }

  set(key: string, body: string, generation: number): void {
    // A write that landed while this answer was being built makes it stale already.
    if (generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value ?? '');
    this.entries.set(key, { body, at: this.clock.now(), generation });
  }

  get currentGeneration(): number {
    return this.generation;
  }
}

/** Registers after auth: a hit answers before validation and the handler run. */
export function registerResponseCache(app: FastifyInstance, cache: ResponseCache): void {
  app.decorateRequest('cacheKey', null);
  const started = new WeakMap<object, number>();
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || !request.routeOptions.config.cache || !request.principal) return;
    const key = cache.keyFor(request.principal, request.url);
    const hit = cache.get(key);
    if (hit !== undefined) {
      return reply.code(200).type('application/json; charset=utf-8').send(hit);
    }
    request.cacheKey = key;
    started.set(request, cache.currentGeneration);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.cacheKey && reply.statusCode === 200 && typeof payload === 'string') {
      cache.set(request.cacheKey, payload, started.get(request) ?? -1);
    }
    return payload;
  });
}
