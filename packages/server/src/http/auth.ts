import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { API_KEY, STREAM_PATH, type Product } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import { SvcError } from '../domain/errors.js';
import { constantTimeEqualHex, hashKey } from '../domain/keys.js';
import { requireProduct, type Principal } from '../domain/scopes.js';
import { storeFault } from '../store/sql/faults.js';
import { principalOf, type KeyRepo } from '../store/accounts/keys.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** `public` routes skip authentication (docs, status, OpenAPI). */
    public?: boolean;
    /** The product a key must hold to call this route. */
    product?: Product;
  }
}

const CACHE_TTL_MS = 5_000;
/**
 * While the database does not answer (stalled, failing over), a key looked up less than
 * STALE_FOR_MS ago is admitted as it was then: at once when the database is known down
 * (health/store-health.ts), else once its lookup has waited LOOKUP_PATIENCE_MS or failed with a
 * store fault: the calls that need no database (cached reads, the stream) go on
 * (docs/operations.md, "Failures and what svc does"). A revocation made meanwhile takes effect
 * when the database answers again; with the database answering, nothing changes.
 */
const STALE_FOR_MS = 10 * 60_000;
const LOOKUP_PATIENCE_MS = 1_000;

type HookDone = HookHandlerDoneFunction;

interface Cached {
  principal: Principal | null;
  at: number;
}

export interface Authenticator {
  authenticate(raw: string | undefined): Promise<Principal>;
  /**
   * The principal when it is known without the database (a cached lookup younger than the TTL),
   * undefined when `authenticate` must look it up; throws what `authenticate` would for a
   * missing, malformed, foreign or revoked key.
   */
  known(raw: string | undefined): Principal | undefined;
  forget(): void;
  /** Drops a key's cached principal at once (an open stream learnt that it was revoked). */
  forgetKey(keyId: string): void;
}

/**
 * Resolves a bearer key to its principal. Keys are looked up by SHA-256 and the stored hash is
 * compared in constant time; a short cache keeps the hot path off the database while letting
 * a revocation take effect within seconds on every node.
 */
export function createAuthenticator(keys: KeyRepo, environment: string, prefix: string, clock: Clock, storeDown: () => boolean = () => false): Authenticator {
  const cache = new Map<string, Cached>();
  const inflight = new Map<string, Promise<Cached>>();
  const unauthenticated = (msg: string) => new SvcError('invalid_api_key', msg);
  return {
    forget: () => cache.clear(),
    forgetKey(keyId) {
      for (const [hash, hit] of cache) if (hit.principal?.keyId === keyId) cache.delete(hash);
    },
    known(raw) {
      const hash = checkedHash(raw);
      const hit = cache.get(hash);
      if (!hit || clock.now() - hit.at > CACHE_TTL_MS) return undefined;
      if (!hit.principal) throw unauthenticated('The API key is not valid or has been revoked.');
      return hit.principal;
    },
    async authenticate(raw) {
      const hash = checkedHash(raw);
      const now = clock.now();
      let hit = cache.get(hash);
      if (!hit || now - hit.at > CACHE_TTL_MS) {
        const stale = hit && now - hit.at <= STALE_FOR_MS ? hit : undefined;
        const lookup = lookUp(hash, now);
        // Known down: the stale entry at once (the lookup still runs, and fills the cache when it is answered).
        if (stale && storeDown()) lookup.catch(() => undefined);
        hit = stale ? (storeDown() ? stale : await lookupOrStale(lookup, stale)) : await lookup;
      }
      if (!hit.principal) throw unauthenticated('The API key is not valid or has been revoked.');
      return hit.principal;
    },
  };

  /** One lookup of a key at a time: while the database stalls, calls with that key do not pile up behind it. */
  function lookUp(hash: string, at: number): Promise<Cached> {
    let pending = inflight.get(hash);
    if (!pending) {
      pending = keys.findByHash(hash).then((found) => {
        const principal = found && !found.key.revoked_at && constantTimeEqualHex(found.hash, hash) ? principalOf(found.key) : null;
        const hit = { principal, at };
        if (cache.size > 10_000) cache.clear();
        cache.set(hash, hit);
        return hit;
      });
      const settled = () => inflight.delete(hash);
      pending.then(settled, settled);
      inflight.set(hash, pending);
    }
    return pending;
  }

  /** The lookup's answer if it comes in time; else, or when it fails for want of the database, the stale entry. */
  function lookupOrStale(lookup: Promise<Cached>, stale: Cached): Promise<Cached> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (hit: Cached) => {
        if (!settled) resolve(hit);
        settled = true;
      };
      lookup.then(settle, (err: unknown) => {
        if (settled) return;
        if (storeFault(err)) settle(stale);
        else {
          settled = true;
          reject(err);
        }
      });
      // A real timer, not the clock: this waits on I/O, and a test's manual clock must not move for it.
      const patience = setTimeout(() => settle(stale), LOOKUP_PATIENCE_MS);
      const done = () => clearTimeout(patience);
      lookup.then(done, done);
    });
  }

  /** The key's SHA-256, once its presence, shape and environment are checked. */
  function checkedHash(raw: string | undefined): string {
    if (!raw) throw new SvcError('missing_api_key', 'Send your key as Authorization: Bearer <API_KEY>.');
    // A stream token is valid on the stream only (docs/stream.md "Stream tokens"), which the gateway authenticates.
    if (raw.startsWith('sst_')) throw unauthenticated('A stream token (sst_…) authenticates GET /v1/stream only; send an API key.');
    if (!API_KEY.test(raw)) throw unauthenticated('The API key is malformed.');
    if (!raw.startsWith(prefix)) {
      throw unauthenticated(
        `This is a ${raw.startsWith('svc_live_') ? 'production' : 'sandbox'} key; this deployment is the ${environment} environment and takes ${prefix} keys.`,
      );
    }
    return hashKey(raw);
  }
}

export function rateLimited(d: RateDecision): SvcError {
  return new SvcError('rate_limited', `Rate limit of ${d.limit} requests per minute exceeded.`, undefined, {
    'Retry-After': String(d.resetS),
  });
}

/**
 * Counts `cost` requests against a metered key's limit (unmetered plans skip the counter) and
 * throws 429 past it: the one check the REST hook and the stream share.
 */
export async function meter(limiter: RateLimiter, principal: Principal, cost = 1): Promise<RateDecision | null> {
  if (!principal.plan.metered) return null;
  const d = await limiter.hit(principal.keyId, principal.plan.requestsPerMinute, cost);
  if (!d.allowed) throw rateLimited(d);
  return d;
}

export function bearer(request: FastifyRequest): string | undefined {
  refuseSeveralAuthorizations(request.raw.rawHeaders);
  return bearerToken(request.headers.authorization);
}

/**
 * Node keeps the first of several Authorization headers and drops the rest, so a request with
 * two keys would be served as whichever came first: ambiguous input is refused instead.
 */
export function refuseSeveralAuthorizations(rawHeaders: readonly string[]): void {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 13 && rawHeaders[i].toLowerCase() === 'authorization' && ++seen > 1) {
      throw new SvcError('invalid_request', 'Send one Authorization header; this request has several.', 'Authorization');
    }
  }
}

/** The key in an Authorization header: `Bearer <key>`, or the header as it is (then refused by its shape). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : header;
}

/**
 * The one owning boundary for keys, products and rate limits of every HTTP request. A callback
 * hook: a key whose principal is cached and whose plan is unmetered is admitted without a promise;
 * a lookup or a rate-limit count (memory or Redis) continues asynchronously.
 */
export function registerAuth(app: FastifyInstance, auth: Authenticator, limiter: RateLimiter): void {
  app.decorateRequest('principal', null);
  // Never throws: every refusal goes to `done`, from the synchronous path and the promise alike.
  const admit = (request: FastifyRequest, reply: FastifyReply, principal: Principal, done: HookDone): void => {
    request.principal = principal;
    const product = request.routeOptions.config.product;
    if (!principal.plan.metered) {
      const limit = principal.plan.requestsPerMinute;
      reply.header('RateLimit-Limit', limit).header('RateLimit-Remaining', limit).header('RateLimit-Reset', 60);
      return done(product ? productRefusal(principal, product) : undefined);
    }
    limiter.hit(principal.keyId, principal.plan.requestsPerMinute).then(
      (d) => {
        reply.header('RateLimit-Limit', d.limit).header('RateLimit-Remaining', d.remaining).header('RateLimit-Reset', d.resetS);
        done(d.allowed ? (product ? productRefusal(principal, product) : undefined) : rateLimited(d));
      },
      (err: unknown) => done(asError(err)),
    );
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.public || request.routeOptions.url === undefined) return done();
    let raw: string | undefined;
    let known: Principal | undefined;
    try {
      raw = bearer(request) ?? accessToken(request);
      known = auth.known(raw);
    } catch (err) {
      return done(asError(err));
    }
    if (known) return admit(request, reply, known, done);
    auth.authenticate(raw).then(
      (principal) => admit(request, reply, principal, done),
      (err: unknown) => done(asError(err)),
    );
  });
}

function productRefusal(principal: Principal, product: Product): Error | undefined {
  try {
    requireProduct(principal, product);
    return undefined;
  } catch (err) {
    return asError(err);
  }
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Browsers cannot set headers on a WebSocket, so the stream also takes ?access_token=. */
function accessToken(request: FastifyRequest): string | undefined {
  if (request.routeOptions.url !== STREAM_PATH) return undefined;
  const q = request.query;
  if (q && typeof q === 'object' && 'access_token' in q && typeof q.access_token === 'string') return q.access_token;
  return undefined;
}
