import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError, invalid } from '../domain/errors.js';
import { parseEventTypes } from '../domain/event-types.js';
import { randomBase62 } from '../domain/keys.js';
import { requireProduct, type Principal } from '../domain/scopes.js';
import { bearerToken, meter, rateLimited, refuseSeveralAuthorizations, type Authenticator } from '../http/auth.js';
import { addressBucket } from '../domain/client-address.js';
import { errorBody } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { eventSeq, STREAM_MAX_DELAY_S, type Tier } from '@svc/schema';
import { validateSubscriptions, type Subscriptions } from './protocol.js';
import { isStreamToken, type PerAddress, type StreamTokens } from './tokens.js';

/** What an upgrade request asks for, once its key, product, rate limit and parameters are checked. */
export interface Handshake {
  principal: Principal;
  requested: Subscriptions;
  tier: Tier | null;
  /** Event types wanted (`types`), null for all. */
  types: string[] | null;
  /** Resume after this seq; null for live only. */
  since: number | null;
  /** Where `since` came from: the query or an event stream's Last-Event-ID header (what a 400 about it names). */
  sinceParam: 'since' | 'Last-Event-ID';
  /** `delay=` in ms (docs/stream.md "Broadcast delay"). */
  delayMs: number;
  /** `min_probability=` (docs/stream.md "min_probability"); 0: every event. */
  minProbability: number;
  /** A stream token's games; null when not limited to games (or opened with a key). */
  scopeGames: readonly string[] | null;
  /** When the stream token that opened it expires; null for a key. */
  expiresAt: number | null;
  /** The stream token's limits per client address (the sandbox demo's), null when it has none. */
  perAddress: PerAddress | null;
  /** The client address's bucket (domain/client-address.ts) the per-address limits count in. */
  address: string;
}

/** What the per-address limits of a key's tokens count in: its slots (connections) and its rate window. */
export const addressCounter = (keyId: string, address: string): string => `addr:${keyId}:${address}`;

export interface HandshakeDeps {
  auth: Authenticator;
  limiter: RateLimiter;
  leagueSport: (league: string) => Promise<string | undefined>;
  maxSubscriptionsPerSocket: number;
  tokens: StreamTokens;
  now: () => number;
}

const QUERY_PARAMS = new Set(['sport', 'league', 'game', 'tier', 'types', 'since', 'access_token', 'token', 'delay', 'min_probability']);
/** A decimal from 0 to 1 as a query gives it: 0, 1, 0.9, .95, 1.0. */
const PROBABILITY = /^(?:0|1)?(?:\.\d{1,6})?$/;
const csv = (v: string | null): string[] => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

/**
 * Checks a stream request before anything is upgraded or streamed, for both transports, in the
 * REST boundary's order (http/auth.ts): key (header, `access_token`) or stream token (`token`),
 * rate limit, product, then parameters. `lastEventId` is an event stream's `Last-Event-ID`
 * header, which resumes like `since` and wins over it (EventSource reconnects with the URL it
 * was opened with). Throws the SvcError the request is refused with.
 */
export async function readHandshake(req: IncomingMessage, url: URL, deps: HandshakeDeps, lastEventId?: string): Promise<Handshake> {
  refuseSeveralAuthorizations(req.rawHeaders);
  const key = bearerToken(req.headers.authorization) ?? url.searchParams.get('access_token') ?? undefined;
  const tokenParam = url.searchParams.get('token');
  if (tokenParam !== null && key !== undefined) throw new SvcError('invalid_request', 'Send an API key or a stream token, not both.', 'token');
  const token = tokenParam ?? (key !== undefined && isStreamToken(key) ? key : null);
  let principal: Principal;
  let scopeGames: readonly string[] | null = null;
  let expiresAt: number | null = null;
  let perAddress: PerAddress | null = null;
  const address = addressBucket(req.socket.remoteAddress);
  if (token !== null) {
    const grant = await deps.tokens.authenticate(token, deps.now());
    ({ principal, expiresAt, perAddress } = grant);
    scopeGames = grant.games;
  } else principal = await deps.auth.authenticate(key);
  // A token that limits each address: its opens are counted per address first, so one client
  // cannot spend the whole key's budget (docs/stream.md "A scoreboard in a public page").
  if (perAddress) {
    const d = await deps.limiter.hit(addressCounter(principal.keyId, address), perAddress.requestsPerMinute);
    if (!d.allowed) throw rateLimited(d);
  }
  await meter(deps.limiter, principal);
  requireProduct(principal, 'live');
  for (const name of url.searchParams.keys()) {
    if (!QUERY_PARAMS.has(name)) throw invalid('unknown_parameter', `Unknown parameter '${name}'.`, name);
  }
  const requested = await validateSubscriptions(
    principal,
    { sports: csv(url.searchParams.get('sport')), leagues: csv(url.searchParams.get('league')), games: csv(url.searchParams.get('game')) },
    deps.leagueSport,
    deps.maxSubscriptionsPerSocket,
    scopeGames,
  );
  const tierRaw = url.searchParams.get('tier');
  let tier: Tier | null = null;
  if (tierRaw !== null) {
    if (tierRaw !== 'provisional' && tierRaw !== 'confirmed') throw invalid('invalid_parameter', "'tier' must be provisional or confirmed.", 'tier');
    tier = tierRaw;
  }
  const types = parseEventTypes(url.searchParams.get('types'));
  const resumeHeader = lastEventId !== undefined && lastEventId.trim() !== '' ? lastEventId.trim() : null;
  const sinceRaw = resumeHeader ?? url.searchParams.get('since');
  const since = sinceRaw === null ? null : (eventSeq(sinceRaw) ?? null);
  const sinceParam = resumeHeader !== null ? 'Last-Event-ID' : 'since';
  if (sinceRaw !== null && since === null) throw invalid('invalid_parameter', `'${sinceParam}' must be an event id (evt_…).`, sinceParam);
  const delayRaw = url.searchParams.get('delay');
  let delayMs = 0;
  if (delayRaw !== null) {
    if (!/^\d{1,3}$/.test(delayRaw) || Number(delayRaw) > STREAM_MAX_DELAY_S) {
      throw invalid('invalid_parameter', `'delay' must be a whole number of seconds from 0 to ${STREAM_MAX_DELAY_S}.`, 'delay');
    }
    delayMs = Number(delayRaw) * 1000;
  }
  const minRaw = url.searchParams.get('min_probability');
  let minProbability = 0;
  if (minRaw !== null) {
    minProbability = Number(minRaw);
    if (minRaw === '' || !PROBABILITY.test(minRaw) || !(minProbability >= 0 && minProbability <= 1)) {
      throw invalid('invalid_parameter', "'min_probability' must be a number from 0 to 1.", 'min_probability');
    }
  }
  return { principal, requested, tier, types, since, sinceParam, delayMs, minProbability, scopeGames, expiresAt, perAddress, address };
}

/** Answers a refused upgrade with the documented JSON error body (and the error's headers, e.g. Retry-After). */
export function refuse(socket: Duplex, e: SvcError): void {
  const body = JSON.stringify(errorBody(e, `req_${randomBase62(20)}`));
  const headers = Object.entries(e.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${e.status} ${e.type}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
