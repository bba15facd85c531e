/**
 * `Idempotency-Key` on every POST, so a client can retry a write it never saw answered.
 *
 * - The key is 1..255 characters; it is kept 24 h (by the injected clock) per API key: two
 *   keys never see each other's entries.
 * - The first request with a key runs; its answer is recorded before it is sent. A later
 *   request with the same key and the same method, path and body gets that answer again,
 *   status and body byte for byte, with `Idempotent-Replayed: true` and `Original-Request-Id`
 *   (the replay has its own X-Request-Id).
 * - The same key with another method, path or body is a 409 `idempotency_key_reused`; while
 *   the first request is still running, a 409 `idempotency_key_in_use` (retry shortly).
 * - Which answers are recorded: every answer of an operation that started executing and ended
 *   below 500, errors included (a 404 or a 409 `game_final` replays as it was, as Stripe does:
 *   the same request gets the same answer). Refusals before the operation runs (authentication,
 *   rate limit, product, schema validation) are not recorded, and neither is a 5xx: the key is
 *   released so a retry runs the operation again instead of replaying a failure.
 * - A request whose process died leaves an in-flight entry; after IN_FLIGHT_LEASE_MS another
 *   request may take it over.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, onSendAsyncHookHandler, preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { withHook } from './route-hooks.js';
import type { Clock } from '../domain/clock.js';
import { SvcError } from '../domain/errors.js';
import type { IdempotencyRepo } from '../store/accounts/idempotency.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** On a replay, the X-Request-Id of the request whose answer it is (error bodies quote that one). */
export const ORIGINAL_REQUEST_HEADER = 'Original-Request-Id';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IN_FLIGHT_LEASE_MS = 60_000;
const PURGE_EVERY_MS = 60_000;

interface Held {
  keyId: string;
  key: string;
  fingerprint: string;
  token: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: Held | null;
  }
}

function headerValue(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || raw.length === 0 || raw.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new SvcError('invalid_idempotency_key', `${IDEMPOTENCY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`, IDEMPOTENCY_HEADER);
  }
  return raw;
}

export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${url}\n`)
    .update(JSON.stringify(body ?? null))
    .digest('hex');
}

export function registerIdempotency(app: FastifyInstance, repo: IdempotencyRepo, clock: Clock): void {
  let lastPurge = 0;
  app.decorateRequest('idempotency', null);

  // Before validation: the body is hashed as the client sent it, before defaults are filled in.
  const hold: preValidationAsyncHookHandler = async (request) => {
    if (!request.principal) return;
    const key = headerValue(request.headers['idempotency-key']);
    if (key === undefined) return;
    request.idempotency = { keyId: request.principal.keyId, key, fingerprint: requestFingerprint(request.method, request.url, request.body), token: null };
  };

  // After validation, so a request refused by its schema records nothing.
  const claim: preHandlerAsyncHookHandler = async (request, reply) => {
    const held = request.idempotency;
    if (!held) return;
    // Routes that check their body themselves (attachValidation) reach here with a refused body:
    // it records nothing either, so the client may fix the body and retry with the same key.
    if (request.validationError) {
      request.idempotency = null;
      return;
    }
    const now = clock.now();
    if (now - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = now;
      repo.purgeExpired(now).catch((err: unknown) => request.log.warn({ err }, 'purging expired idempotency keys failed'));
    }
    const claim = await repo.claim({ keyId: held.keyId, idempotencyKey: held.key, fingerprint: held.fingerprint, now, ttlMs: IDEMPOTENCY_TTL_MS, inFlightLeaseMs: IN_FLIGHT_LEASE_MS });
    if (claim.kind === 'claimed') {
      held.token = claim.token;
      return;
    }
    request.idempotency = null;
    const row = claim.row;
    if (row.fingerprint !== held.fingerprint) {
      throw new SvcError('idempotency_key_reused', `This ${IDEMPOTENCY_HEADER} was used with another request; use a new key for a new request.`, IDEMPOTENCY_HEADER);
    }
    if (row.state !== 'done' || row.status_code === null || row.body === null) {
      throw new SvcError('idempotency_key_in_use', `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly.`, IDEMPOTENCY_HEADER);
    }
    reply.code(row.status_code).header(REPLAYED_HEADER, 'true');
    if (row.request_id) reply.header(ORIGINAL_REQUEST_HEADER, row.request_id);
    if (row.content_type) reply.header('content-type', row.content_type);
    return reply.send(row.body);
  };

  // Recorded before the answer leaves, so a retry that follows it always finds it.
  const record: onSendAsyncHookHandler<unknown> = async (request, reply, payload) => {
    const held = request.idempotency;
    if (!held || held.token === null) return payload;
    request.idempotency = null;
    const contentType = reply.getHeader('content-type');
    try {
      if (reply.statusCode < 500 && typeof payload === 'string') {
        await repo.complete(held.keyId, held.key, held.token, {
          requestId: request.id,
          statusCode: reply.statusCode,
          contentType: typeof contentType === 'string' ? contentType : null,
          body: payload,
        });
      } else {
        await repo.release(held.keyId, held.key, held.token);
      }
    } catch (err) {
      // The operation's answer stands; the entry stays in flight until its lease lapses.
      request.log.error({ err }, 'recording the idempotent answer failed');
    }
    return payload;
  };

  // Only POST routes carry the hooks (docs/architecture.md "Request pipeline").
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    route.preValidation = withHook(route.preValidation, hold);
    route.preHandler = withHook(route.preHandler, claim);
    route.onSend = withHook(route.onSend, record);
  });
}
