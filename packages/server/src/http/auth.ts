import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY, type Product } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import { SvcError } from '../domain/errors.js';
import { constantTimeEqualHex, hashKey } from '../domain/keys.js';
import { requireProduct, type Principal } from '../domain/scopes.js';
import { principalOf, type KeyRepo } from '../store/keys.js';
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

export interface Authenticator {
  authenticate(raw: string | undefined): Promise<Principal>;
  forget(): void;
  /** Drops a key's cached principal at once (an open stream learnt that it was revoked). */
  forgetKey(keyId: string): void;
}

/**
 * Resolves a bearer key to its principal. Keys are looked up by SHA-256 and the stored hash is
 * compared in constant time; a short cache keeps the hot path off the database while letting
 * a revocation take effect within seconds on every node.
 */
export function createAuthenticator(keys: KeyRepo, environment: string, prefix: string, clock: Clock): Authenticator {
  const cache = new Map<string, { principal: Principal | null; at: number }>();
  const unauthenticated = (msg: string) => new SvcError('invalid_api_key', msg);
  return {
    forget: () => cache.clear(),
    forgetKey(keyId) {
      for (const [hash, hit] of cache) if (hit.principal?.keyId === keyId) cache.delete(hash);
    },
    async authenticate(raw) {
      if (!raw) throw new SvcError('missing_api_key', 'Send your key as Authorization: Bearer <API_KEY>.');
      if (!API_KEY.test(raw)) throw unauthenticated('The API key is malformed.');
      if (!raw.startsWith(prefix)) {
        throw unauthenticated(
          `This is a ${raw.startsWith('svc_live_') ? 'production' : 'sandbox'} key; this deployment is the ${environment} environment and takes ${prefix} keys.`,
        );
      }
      const hash = hashKey(raw);
      const now = clock.now();
      let hit = cache.get(hash);
      if (!hit || now - hit.at > CACHE_TTL_MS) {
        const found = await keys.findByHash(hash);
        const principal =
          found && !found.key.revoked_at && constantTimeEqualHex(found.hash, hash) ? principalOf(found.key) : null;
        hit = { principal, at: now };
        if (cache.size > 10_000) cache.clear();
        cache.set(hash, hit);
      }
      if (!hit.principal) throw unauthenticated('The API key is not valid or has been revoked.');
      return hit.principal;
    },
  };
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
  return bearerToken(request.headers.authorization);
}

/** The key in an Authorization header: `Bearer <key>`, or the header as it is (then refused by its shape). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : header;
}

/** The one owning boundary for keys, products and rate limits of every HTTP request. */
export function registerAuth(app: FastifyInstance, auth: Authenticator, limiter: RateLimiter): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const cfg = request.routeOptions.config;
    if (cfg.public || request.routeOptions.url === undefined) return;
    const principal = await auth.authenticate(bearer(request) ?? accessToken(request));
    request.principal = principal;
    if (principal.plan.metered) {
      const d = await limiter.hit(principal.keyId, principal.plan.requestsPerMinute);
      reply.header('RateLimit-Limit', d.limit).header('RateLimit-Remaining', d.remaining).header('RateLimit-Reset', d.resetS);
      if (!d.allowed) throw rateLimited(d);
    } else {
      reply.header('RateLimit-Limit', principal.plan.requestsPerMinute).header('RateLimit-Remaining', principal.plan.requestsPerMinute).header('RateLimit-Reset', 60);
    }
    if (cfg.product) requireProduct(principal, cfg.product);
  });
}

/** Browsers cannot set headers on a WebSocket, so the stream also takes ?access_token=. */
function accessToken(request: FastifyRequest): string | undefined {
  if (request.routeOptions.url !== '/v1/stream') return undefined;
  const q = request.query;
  if (q && typeof q === 'object' && 'access_token' in q && typeof q.access_token === 'string') return q.access_token;
  return undefined;
}
