import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SvcError } from '../domain/errors.js';
import { invalid } from '../domain/errors.js';
import { parseEventTypes } from '../domain/event-types.js';
import { randomBase62 } from '../domain/keys.js';
import { requireProduct, type Principal } from '../domain/scopes.js';
import { bearerToken, meter, refuseSeveralAuthorizations, type Authenticator } from '../http/auth.js';
import { errorBody } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { eventSeq, type Tier } from '@svc/schema';
import { validateSubscriptions, type Subscriptions } from './protocol.js';

/** What an upgrade request asks for, once its key, product, rate limit and parameters are checked. */
export interface Handshake {
  principal: Principal;
  requested: Subscriptions;
  tier: Tier | null;
  /** Event types wanted (`types`), null for all. */
  types: string[] | null;
  /** Resume after this seq; null for live only. */
  since: number | null;
}

export interface HandshakeDeps {
  auth: Authenticator;
  limiter: RateLimiter;
  leagueSport: (league: string) => Promise<string | undefined>;
  maxSubscriptionsPerSocket: number;
}

const QUERY_PARAMS = new Set(['sport', 'league', 'game', 'tier', 'types', 'since', 'access_token']);
const csv = (v: string | null): string[] => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

/**
 * Checks an upgrade before anything is upgraded, in the REST boundary's order (http/auth.ts):
 * key (header, or `access_token` for browsers), rate limit, product, then parameters. Throws the
 * SvcError that `refuse` answers with.
 */
export async function readHandshake(req: IncomingMessage, url: URL, deps: HandshakeDeps): Promise<Handshake> {
  refuseSeveralAuthorizations(req.rawHeaders);
  const principal = await deps.auth.authenticate(bearerToken(req.headers.authorization) ?? url.searchParams.get('access_token') ?? undefined);
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
  );
  const tierRaw = url.searchParams.get('tier');
  let tier: Tier | null = null;
  if (tierRaw !== null) {
    if (tierRaw !== 'provisional' && tierRaw !== 'confirmed') throw invalid('invalid_parameter', "'tier' must be provisional or confirmed.", 'tier');
    tier = tierRaw;
  }
  const types = parseEventTypes(url.searchParams.get('types'));
  const sinceRaw = url.searchParams.get('since');
  const since = sinceRaw === null ? null : (eventSeq(sinceRaw) ?? null);
  if (sinceRaw !== null && since === null) throw invalid('invalid_parameter', "'since' must be an event id (evt_…).", 'since');
  return { principal, requested, tier, types, since };
}

/** Answers a refused upgrade with the documented JSON error body (and the error's headers, e.g. Retry-After). */
export function refuse(socket: Duplex, e: SvcError): void {
  const body = JSON.stringify(errorBody(e, `req_${randomBase62(20)}`));
  const headers = Object.entries(e.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${e.status} ${e.type}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
