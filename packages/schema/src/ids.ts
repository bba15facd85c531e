/**
 * Identifier formats, defined once. Anything that parses or mints an id uses these, so the
 * server, the clients and the OpenAPI patterns cannot disagree about what an id looks like.
 */

/** `<sport>_<n>`: a game of a team sport; `n` is shared with its competition id. */
export const GAME_ID = /^([a-z]+)_(\d{1,12})$/;
/** `<sport>_<league>_<n>`: any competition (game, match, round, bout). */
export const COMPETITION_ID = /^([a-z]+)_([a-z0-9]{1,16})_(\d{1,12})$/;
/** `evt_<seq>`: the sequence number zero-padded to 12 digits, so ids sort as they were appended. */
export const EVENT_ID = /^evt_(\d{1,15})$/;
/** `dlv_<8 sortable base62 time chars><16 random base62>`. */
export const DELIVERY_ID = /^dlv_[0-9A-Za-z]{24}$/;
/** `we_<24 random base62>`. */
export const ENDPOINT_ID = /^we_[0-9A-Za-z]{24}$/;
/** `rpt_<20 random base62>`. */
export const REPORT_ID = /^rpt_[0-9A-Za-z]{20}$/;
/** `ntf_<20 random base62>`. */
export const NOTIFICATION_ID = /^ntf_[0-9A-Za-z]{20}$/;
/** `svc_live_…` (production) or `svc_test_…` (sandbox) followed by 16 to 64 base62 characters. */
export const API_KEY = /^svc_(live|test)_[A-Za-z0-9]{16,64}$/;

export const ID_PREFIX = { event: 'evt_', delivery: 'dlv_', endpoint: 'we_', report: 'rpt_', notification: 'ntf_', webhookSecret: 'whsec_' } as const;

/** The sport and number of a game id, undefined when the string is not one. */
export function parseGameId(id: string): { sport: string; n: number } | undefined {
  const m = GAME_ID.exec(id);
  return m ? { sport: m[1], n: Number(m[2]) } : undefined;
}

export const gameId = (c: { sport: string; n: number }): string => `${c.sport}_${c.n}`;

export const eventId = (seq: number): string => `${ID_PREFIX.event}${seq.toString().padStart(12, '0')}`;

/** The sequence number of an event id, undefined when the string is not one. */
export function eventSeq(id: string): number | undefined {
  const m = EVENT_ID.exec(id);
  return m ? Number(m[1]) : undefined;
}

/** The same formats as JSON Schema patterns, for request validation and the API description. */
export const ID_PATTERN = {
  game: GAME_ID.source,
  competition: COMPETITION_ID.source,
  event: EVENT_ID.source,
  delivery: DELIVERY_ID.source,
  endpoint: ENDPOINT_ID.source,
  report: REPORT_ID.source,
  notification: NOTIFICATION_ID.source,
} as const;
