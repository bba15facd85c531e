/**
 * The error body and the closed catalogue of error codes. Every code the service can answer is
 * declared here once with its `type` and HTTP status; the server builds its errors from this
 * table and the clients map codes from it, so a code cannot appear on the wire without an entry.
 */
import { Type, type Static } from '@sinclair/typebox';

/** Each error `type` with the HTTP status it always travels with. */
export const ERROR_TYPE_STATUS = {
  invalid_request: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_error: 429,
  api_error: 500,
  unavailable: 503,
} as const;
export type ErrorType = keyof typeof ERROR_TYPE_STATUS;
export const ERROR_TYPES = Object.keys(ERROR_TYPE_STATUS) as readonly ErrorType[];

/**
 * One catalogue entry; the status must be the one of its type (a mismatch does not compile).
 * Refusals of a request that never reached a route (it came too slowly, its headers or a path
 * segment were too long) keep the `invalid_request` type but answer with HTTP's own status
 * (408, 414, 431), which proxies and HTTP clients understand; so does a change-feed cursor past
 * the feed's retention (410: it will never be served again).
 */
export type ErrorCodeSpec = {
  [T in ErrorType]: {
    readonly type: T;
    readonly status: (typeof ERROR_TYPE_STATUS)[T] | (T extends 'invalid_request' ? 408 | 410 | 414 | 431 : never);
    readonly description: string;
  };
}[ErrorType];

const spec = <const T extends Record<string, ErrorCodeSpec>>(catalogue: T): T => catalogue;

export const ERROR_CODES = spec({
  // 400 invalid_request: the request as sent cannot be served; fix it before retrying.
  invalid_request: { type: 'invalid_request', status: 400, description: 'The request is malformed.' },
  invalid_json: { type: 'invalid_request', status: 400, description: 'The body is empty or not valid JSON.' },
  unknown_field: { type: 'invalid_request', status: 400, description: 'The body has a field the operation does not take (`param` names it).' },
  missing_field: { type: 'invalid_request', status: 400, description: 'A required body field is missing (`param` names it).' },
  invalid_field: { type: 'invalid_request', status: 400, description: 'A body field has a wrong type or value (`param` names it).' },
  unknown_parameter: { type: 'invalid_request', status: 400, description: 'The query has a parameter the operation does not take.' },
  missing_parameter: { type: 'invalid_request', status: 400, description: 'A required query parameter is missing.' },
  invalid_parameter: { type: 'invalid_request', status: 400, description: 'A path or query parameter has a wrong value.' },
  invalid_cursor: { type: 'invalid_request', status: 400, description: 'The cursor is not one this operation issued.' },
  invalid_idempotency_key: { type: 'invalid_request', status: 400, description: 'The Idempotency-Key header is empty or longer than 255 characters.' },
  upgrade_required: { type: 'invalid_request', status: 400, description: 'GET /v1/stream was called without a WebSocket upgrade or `Accept: text/event-stream`.' },
  unknown_game: { type: 'invalid_request', status: 400, description: 'A report or a replay names a game that does not exist (for the key).' },
  team_not_in_game: { type: 'invalid_request', status: 400, description: 'A report names a team that does not play in the game.' },
  invalid_points: { type: 'invalid_request', status: 400, description: 'The points cannot be scored at once in the sport.' },
  competitor_not_in_competition: { type: 'invalid_request', status: 400, description: 'A play names a competitor outside the competition.' },
  play_after_final: { type: 'invalid_request', status: 400, description: 'A play follows the final play of its batch.' },
  withdraws_unknown: { type: 'invalid_request', status: 400, description: 'A `score_withdrawn` play’s `withdraws` names no play of the competition and no event (docs/corrections.md).' },
  withdraws_other_game: { type: 'invalid_request', status: 400, description: 'A `score_withdrawn` play’s `withdraws` names an event of another game.' },
  withdraws_not_a_score: { type: 'invalid_request', status: 400, description: 'A `score_withdrawn` play’s `withdraws` names something that is not a confirmed score: a play without points, a provisional event never confirmed, a status event, a retraction or a correction.' },
  withdrawal_not_alone: { type: 'invalid_request', status: 400, description: 'A `score_withdrawn` play came in a batch with other plays; post it on its own.' },
  invalid_url: { type: 'invalid_request', status: 400, description: 'The webhook URL is not an allowed absolute URL.' },
  unknown_sport: { type: 'invalid_request', status: 400, description: 'A webhook endpoint names an unknown sport.' },
  unsupported_tier: { type: 'invalid_request', status: 400, description: 'Webhooks deliver confirmed events only.' },
  invalid_range: { type: 'invalid_request', status: 400, description: 'A replay range whose `from` is not before its `to`.' },
  outside_replay_window: { type: 'invalid_request', status: 400, description: 'A replay range reaching back further than the replay window.' },
  replay_too_large: { type: 'invalid_request', status: 400, description: 'A replay range holding more events than one replay takes.' },
  subscription_limit: { type: 'invalid_request', status: 400, description: 'A stream socket (1,000) or a key on one node (5,000) would hold too many subscriptions.' },
  standings_unavailable: { type: 'invalid_request', status: 400, description: 'The league’s sport has no standings or leaders (tennis, golf, MMA); `param` is `league`.' },
  invalid_characters: { type: 'invalid_request', status: 400, description: 'A parameter or field holds characters that cannot be stored (NUL, unpaired surrogates).' },
  malformed_request: { type: 'invalid_request', status: 400, description: 'The bytes received are not a valid HTTP/1.1 request.' },
  malformed_url: { type: 'invalid_request', status: 400, description: 'The URL cannot be decoded (bad percent-encoding).' },
  request_timeout: { type: 'invalid_request', status: 408, description: 'The headers or body did not arrive within the server’s timeouts.' },
  uri_too_long: { type: 'invalid_request', status: 414, description: 'A path segment is longer than any id.' },
  headers_too_large: { type: 'invalid_request', status: 431, description: 'The request line and headers exceed 16 kB.' },
  cursor_expired: { type: 'invalid_request', status: 410, description: 'The change-feed cursor points before the oldest change kept (the retention); start again from an export and its X-Changes-Cursor.' },
  // 401 authentication_error
  missing_api_key: { type: 'authentication_error', status: 401, description: 'No API key was sent.' },
  invalid_api_key: { type: 'authentication_error', status: 401, description: 'The key is malformed, unknown, revoked or of another environment; or a stream token was sent to an endpoint other than GET /v1/stream, or its key was revoked.' },
  token_expired: { type: 'authentication_error', status: 401, description: 'The stream token (`sst_…`) has expired; mint another with POST /v1/stream/tokens.' },
  // 403 permission_error
  product_not_in_plan: { type: 'permission_error', status: 403, description: 'The key does not include the product the operation needs.' },
  sport_not_in_scope: { type: 'permission_error', status: 403, description: 'The record is outside the key’s sports or leagues.' },
  webhook_endpoint_limit: { type: 'permission_error', status: 403, description: 'The plan’s number of webhook endpoints is reached.' },
  sandbox_only: { type: 'permission_error', status: 403, description: 'The operation takes a sandbox key (`svc_test_…`); live keys cannot use it.' },
  // 404 not_found
  resource_not_found: { type: 'not_found', status: 404, description: 'No record with this id (or not visible to the key).' },
  route_not_found: { type: 'not_found', status: 404, description: 'No such method and path.' },
  // 409 conflict
  competition_final: { type: 'conflict', status: 409, description: 'The competition is final; it takes no more plays.' },
  already_withdrawn: { type: 'conflict', status: 409, description: 'The score a `score_withdrawn` play names was withdrawn already (by an earlier correction or by the final result).' },
  game_final: { type: 'conflict', status: 409, description: 'The game is final; it takes no more reports.' },
  game_not_live: { type: 'conflict', status: 409, description: 'Reports are taken on game day only, and never for a postponed or cancelled game.' },
  invalid_transition: { type: 'conflict', status: 409, description: 'The competition cannot move from its status to the one asked for (docs/schedule.md lists the transitions), or a play would make it.' },
  test_in_progress: { type: 'conflict', status: 409, description: 'A test event to this webhook endpoint is still on its way; wait for its answer.' },
  endpoint_disabled: { type: 'conflict', status: 409, description: 'The webhook endpoint is disabled; enable it first.' },
  idempotency_key_reused: { type: 'conflict', status: 409, description: 'The Idempotency-Key was used with another request body.' },
  replay_limit: { type: 'conflict', status: 409, description: 'The key already runs as many replays as it may at once (5); cancel one or wait for one to finish.' },
  game_not_final: { type: 'conflict', status: 409, description: 'A replay names a game that is not final yet; only finished games can be replayed.' },
  idempotency_key_in_use: { type: 'conflict', status: 409, description: 'A request with this Idempotency-Key is still being processed; retry later.' },
  // 413, 415
  payload_too_large: { type: 'payload_too_large', status: 413, description: 'The request body is too large.' },
  unsupported_media_type: { type: 'unsupported_media_type', status: 415, description: 'The body is not application/json.' },
  // 429
  rate_limited: { type: 'rate_limit_error', status: 429, description: 'The plan’s requests per minute are used up; see Retry-After.' },
  connection_limit: { type: 'rate_limit_error', status: 429, description: 'The plan’s stream connections (counted across the cluster) are all open: an event-stream request is refused before it starts (a WebSocket closes with 4029).' },
  too_many_exports: { type: 'rate_limit_error', status: 429, description: 'The key already runs as many exports as its plan allows at once (free 1, pro 4, enterprise 16); retry after Retry-After, or when one ends.' },
  // 503
  draining: { type: 'unavailable', status: 503, description: 'This node is shutting down; retry, and the next connection reaches another node.' },
  consensus_unavailable: { type: 'unavailable', status: 503, description: 'No node could take the game’s consensus in time (a handover is under way); retry shortly.' },
  not_ready: { type: 'unavailable', status: 503, description: 'A dependency (database, Redis, migrations) is not ready.' },
  store_unavailable: { type: 'unavailable', status: 503, description: 'The database cannot be reached or is failing; nothing was stored. Retry: the node reconnects by itself.' },
  storage_full: { type: 'unavailable', status: 503, description: 'The database has no space left; nothing was stored. Retry once space is freed.' },
  bus_unavailable: { type: 'unavailable', status: 503, description: 'Redis, which this call needs in cluster mode, cannot be reached; retry: the node reconnects by itself.' },
  // 500
  internal_error: { type: 'api_error', status: 500, description: 'A failure on the service’s side; quote the request id.' },
});
export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes of one error type, e.g. `ErrorCodeOf<'invalid_request'>`. */
export type ErrorCodeOf<T extends ErrorType> = { [C in ErrorCode]: (typeof ERROR_CODES)[C]['type'] extends T ? C : never }[ErrorCode];
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as readonly ErrorCode[];

export const literalUnion = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description === undefined ? {} : { description },
  );

export const ErrorDetail = Type.Object(
  {
    type: literalUnion(ERROR_TYPES, 'The class of error; fixes the HTTP status.'),
    code: literalUnion(ERROR_CODE_LIST, 'What went wrong, from a closed list; branch on it.'),
    message: Type.String({ description: 'For people; do not parse it.' }),
    param: Type.Optional(Type.String({ description: 'The field, parameter or header at fault.' })),
    request_id: Type.String({ description: 'Also the X-Request-Id header.' }),
  },
  { additionalProperties: false },
);

/** Every non-2xx JSON answer. */
export const ErrorBody = Type.Object({ error: ErrorDetail }, { additionalProperties: false });
export type ErrorBody = Static<typeof ErrorBody>;
