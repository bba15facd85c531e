import { SPORTS, STREAM_CLOSE_CODES, parseGameId, type ControlFrame, type ErrorFrame, type StreamErrorCode } from '@svc/schema';
import { SvcError, invalid } from '../domain/errors.js';
import { requireScope, type Principal } from '../domain/scopes.js';
import { toSvcError } from '../http/errors.js';
import { textFrame } from './frames.js';

/**
 * The stream's wire protocol besides the events themselves: what a client may send, the control
 * frames the server answers with, and the close codes. Frame shapes are part of the contract
 * (README, "Live: reports, consensus, stream"): keep their fields and their order.
 */

/** Sports, leagues and games a client names; a socket's subscriptions are their union. */
export interface Subscriptions {
  sports: string[];
  leagues: string[];
  games: string[];
}

export type SubscriptionOp = 'subscribe' | 'unsubscribe';

export type ClientMessage = { op: 'ping' } | ({ op: SubscriptionOp; min_probability?: number } & Subscriptions);

export type { ControlFrame, ErrorFrame };

/** Close codes of the stream besides the standard ones. */
export const CLOSE = {
  shuttingDown: { code: STREAM_CLOSE_CODES.going_away, reason: 'server shutting down' },
  replayFailed: { code: STREAM_CLOSE_CODES.replay_failed, reason: 'replay_failed' },
  slowConsumer: { code: STREAM_CLOSE_CODES.slow_consumer, reason: 'slow_consumer' },
  connectionLimit: { code: STREAM_CLOSE_CODES.connection_limit, reason: 'connection limit of the plan reached' },
  keyRevoked: { code: STREAM_CLOSE_CODES.key_revoked, reason: 'key_revoked' },
  rateLimited: { code: STREAM_CLOSE_CODES.rate_limited, reason: 'rate_limited' },
  tokenExpired: { code: STREAM_CLOSE_CODES.token_expired, reason: 'token_expired' },
} as const;

/** A control frame as complete WebSocket frame bytes, ready for the outbox. */
export function controlFrame(frame: ControlFrame): Buffer {
  return textFrame(Buffer.from(JSON.stringify(frame)));
}

export const HEARTBEAT_FRAME = controlFrame({ type: 'heartbeat' });

export function asSvcError(err: unknown): SvcError {
  return err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err)));
}

export function errorFrame(e: SvcError): ErrorFrame {
  return { type: 'error', code: e.code, message: e.message, ...(e.param ? { param: e.param } : {}) };
}

const protocolError = (code: StreamErrorCode, message: string): ErrorFrame => ({ type: 'error', code, message });

/** A client's text message, or the error frame that answers a malformed one. */
export function parseClientMessage(text: string): ClientMessage | ErrorFrame {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return protocolError('invalid_json', 'Messages are JSON objects with an "op".');
  }
  if (typeof msg !== 'object' || msg === null || !('op' in msg)) return protocolError('invalid_message', 'Messages are JSON objects with an "op".');
  const op = msg.op;
  if (op === 'ping') return { op };
  if (op !== 'subscribe' && op !== 'unsubscribe') return protocolError('unknown_op', `Unknown op '${String(op)}'; use subscribe, unsubscribe or ping.`);
  const strings = (v: unknown): string[] | null =>
    v === undefined ? [] : Array.isArray(v) && v.every((x): x is string => typeof x === 'string') ? v : null;
  const sports = strings('sports' in msg ? msg.sports : undefined);
  const leagues = strings('leagues' in msg ? msg.leagues : undefined);
  const games = strings('games' in msg ? msg.games : undefined);
  if (!sports || !leagues || !games) return protocolError('invalid_message', 'sports, leagues and games are arrays of strings.');
  if (!('min_probability' in msg)) return { op, sports, leagues, games };
  const min = msg.min_probability;
  if (op !== 'subscribe' || typeof min !== 'number' || !(min >= 0 && min <= 1)) {
    return { type: 'error', code: 'invalid_message', message: "'min_probability' is a number from 0 to 1, sent with subscribe.", param: 'min_probability' };
  }
  return { op, sports, leagues, games, min_probability: min };
}

export const isErrorFrame = (m: ClientMessage | ErrorFrame): m is ErrorFrame => 'type' in m;

export const countOf = (s: Subscriptions): number => s.sports.length + s.leagues.length + s.games.length;

export const subscriptionLimit = (message: string): SvcError => invalid('subscription_limit', message);

/**
 * Checks requested sports/leagues/games against the known values and the key's scope; returns
 * them without repeats. Bounded before any lookup: a message is at most maxPayload, but
 * thousands of ids are work.
 */
export async function validateSubscriptions(
  p: Principal,
  req: Subscriptions,
  leagueSport: (league: string) => Promise<string | undefined>,
  maxPerSocket: number,
  /** A stream token's games: a game outside them is refused like one outside the key's scope. */
  scopeGames: readonly string[] | null = null,
): Promise<Subscriptions> {
  const out = { sports: [...new Set(req.sports)], leagues: [...new Set(req.leagues)], games: [...new Set(req.games)] };
  if (countOf(out) > maxPerSocket) throw subscriptionLimit(`A socket holds at most ${maxPerSocket} subscriptions; this asks for ${countOf(out)}.`);
  for (const s of out.sports) {
    if (!SPORTS.some((x) => x === s)) throw invalid('invalid_parameter', `Unknown sport '${s}'.`, 'sport');
    requireScope(p, s, undefined, 'sport');
  }
  for (const l of out.leagues) {
    const sport = await leagueSport(l);
    if (sport === undefined) throw invalid('invalid_parameter', `Unknown league '${l}'.`, 'league');
    requireScope(p, sport, l, 'league');
  }
  for (const g of out.games) {
    const game = parseGameId(g);
    if (!game) throw invalid('invalid_parameter', `'${g}' is not a game id (<sport>_<n>).`, 'game');
    requireScope(p, game.sport, undefined, 'game');
    if (scopeGames && !scopeGames.includes(g)) throw new SvcError('sport_not_in_scope', `This stream token is not scoped to game '${g}'.`, 'game');
  }
  return out;
}
