/**
 * The stream protocol of `GET /v1/stream`: what a client sends, the control frames the server
 * sends beside events (which travel as `WireEvent`), and the close codes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODE_LIST, literalUnion, type ErrorCode } from './errors.js';
import { TIERS, WireEvent } from './events.js';

const Names = Type.Array(Type.String());

export const SubscribeMessage = Type.Object(
  {
    op: Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')]),
    sports: Type.Optional(Names),
    leagues: Type.Optional(Names),
    games: Type.Optional(Type.Array(Type.String({ description: 'Game id, <sport>_<n>.' }))),
    min_probability: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'With `subscribe`: from now on, events whose `confidence.probability` is below this are not sent (0: every event), for the whole connection. A `score_retracted` of an event that was sent is always sent.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Adds to or removes from the connection’s filter; answered by `subscribed`.' },
);
export type SubscribeMessage = Static<typeof SubscribeMessage>;

export const PingMessage = Type.Object({ op: Type.Literal('ping') }, { additionalProperties: false, description: 'Answered by `pong`.' });
export type PingMessage = Static<typeof PingMessage>;

export const ClientMessage = Type.Union([SubscribeMessage, PingMessage]);
export type ClientMessage = Static<typeof ClientMessage>;

export const SubscribedFrame = Type.Object(
  {
    type: Type.Literal('subscribed'),
    recovered: Type.Boolean({
      description: 'True when every matching event after `since` that the key may read was replayed, in order, before live ones; false otherwise (no `since`, `since` not an event of the last 24 h, or more than 10,000 matching events).',
    }),
    op: Type.Optional(Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')], { description: 'On the answer to a message: which op it answers.' })),
    sports: Names,
    leagues: Names,
    games: Names,
    tier: Type.Union([...TIERS.map((t) => Type.Literal(t)), Type.Null()], { description: 'null: both tiers.' }),
    min_probability: Type.Number({ minimum: 0, maximum: 1, description: 'The connection’s `min_probability` (0: every event).' }),
  },
  {
    additionalProperties: false,
    description:
      'Sent once the connection is set up (with the whole selection) and after each subscribe or unsubscribe (with `op` and only what that message changed).',
  },
);
export type SubscribedFrame = Static<typeof SubscribedFrame>;

export const HeartbeatFrame = Type.Object({ type: Type.Literal('heartbeat') }, { additionalProperties: false, description: 'After 5 s without any other frame.' });
export type HeartbeatFrame = Static<typeof HeartbeatFrame>;

export const PongFrame = Type.Object({ type: Type.Literal('pong') }, { additionalProperties: false });
export type PongFrame = Static<typeof PongFrame>;

/** Codes only the stream's message handling answers; a refused subscribe carries an `ErrorCode`. */
export const STREAM_MESSAGE_ERRORS = {
  invalid_json: 'The message is not JSON.',
  invalid_message: 'The message is not an object with an `op`, its lists are not arrays of strings, or `min_probability` is not a number from 0 to 1 sent with `subscribe`.',
  unknown_op: 'The `op` is not subscribe, unsubscribe or ping.',
} as const;
export type StreamErrorCode = ErrorCode | keyof typeof STREAM_MESSAGE_ERRORS;
const STREAM_ERROR_CODE_LIST: readonly StreamErrorCode[] = [...new Set<StreamErrorCode>([...ERROR_CODE_LIST, ...(Object.keys(STREAM_MESSAGE_ERRORS) as (keyof typeof STREAM_MESSAGE_ERRORS)[])])];

export const ErrorFrame = Type.Object(
  {
    type: Type.Literal('error'),
    code: literalUnion(STREAM_ERROR_CODE_LIST),
    message: Type.String(),
    param: Type.Optional(Type.String()),
    retry_after: Type.Optional(Type.Integer({ minimum: 0, description: 'With `rate_limited`: seconds before the key may resume.' })),
  },
  { additionalProperties: false, description: 'A message the server could not act on; the connection stays open unless a close follows.' },
);
export type ErrorFrame = Static<typeof ErrorFrame>;

export const CloseFrame = Type.Object(
  {
    type: Type.Literal('close'),
    code: Type.Integer({ description: 'The WebSocket close code of the same reason (4008 slow_consumer, 4401 key_revoked, …).' }),
    reason: Type.String(),
  },
  {
    additionalProperties: false,
    description: 'Event stream only (`event: close`): the server ends the response for this reason right after it; a WebSocket gets the close code instead.',
  },
);
export type CloseFrame = Static<typeof CloseFrame>;

export const ControlFrame = Type.Union([SubscribedFrame, HeartbeatFrame, PongFrame, ErrorFrame, CloseFrame]);
export type ControlFrame = Static<typeof ControlFrame>;

/** Anything the server sends on the stream: events, and control frames told apart by `type`. */
export const StreamFrame = Type.Union([WireEvent, ControlFrame]);
export type StreamFrame = Static<typeof StreamFrame>;

/** Where the stream is served: one endpoint beside the REST API, as a WebSocket or as server-sent events. */
export const STREAM_PATH = '/v1/stream';
/** Where stream tokens are minted (docs/stream.md "Stream tokens"). */
export const STREAM_TOKENS_PATH = '/v1/stream/tokens';
/** The `Content-Type` an event-stream request accepts and its answer carries. */
export const EVENT_STREAM_TYPE = 'text/event-stream';
/** A stream token's shape: `sst_` and an opaque, sealed body. */
export const STREAM_TOKEN = /^sst_[0-9a-f]{16}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{1,4096}\.[A-Za-z0-9_-]{22}$/;
/** Seconds a stream token lives: at least, by default and at most. */
export const STREAM_TOKEN_TTL = { min: 60, default: 3600, max: 86_400 } as const;
/** Seconds `delay=` may hold the stream's frames back. */
export const STREAM_MAX_DELAY_S = 300;
/** Sports, leagues and games one token may name, counted together (the token travels in a URL). */
export const STREAM_TOKEN_MAX_NAMES = 100;

export const CreateStreamTokenBody = Type.Object(
  {
    ttl_s: Type.Optional(
      Type.Integer({ minimum: STREAM_TOKEN_TTL.min, maximum: STREAM_TOKEN_TTL.max, default: STREAM_TOKEN_TTL.default, description: 'Seconds until the token expires.' }),
    ),
    sports: Type.Optional(Type.Array(Type.String(), { maxItems: STREAM_TOKEN_MAX_NAMES, description: 'Only these sports (within the key’s).' })),
    leagues: Type.Optional(Type.Array(Type.String(), { maxItems: STREAM_TOKEN_MAX_NAMES, description: 'Only these leagues (within the key’s).' })),
    games: Type.Optional(Type.Array(Type.String({ description: 'Game id, <sport>_<n>.' }), { maxItems: STREAM_TOKEN_MAX_NAMES, description: 'Only these games.' })),
  },
  { additionalProperties: false },
);
export type CreateStreamTokenBody = Static<typeof CreateStreamTokenBody>;

export const StreamToken = Type.Object(
  {
    token: Type.String({ description: 'Pass as `?token=` to GET /v1/stream (WebSocket or event stream); valid nowhere else.' }),
    expires_at: Type.String({ format: 'date-time' }),
    sports: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The sports the token is narrowed to; null: the key’s.' }),
    leagues: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The leagues the token is narrowed to; null: the key’s.' }),
    games: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The games the token is narrowed to; null: every game in its sports and leagues.' }),
  },
  { additionalProperties: false },
);
export type StreamToken = Static<typeof StreamToken>;

export const STREAM_CLOSE_CODES = {
  /** The server is shutting down: reconnect (elsewhere) with `since`. */
  going_away: 1001,
  /** The unsent buffer passed 1 MiB: reconnect with `since`. */
  slow_consumer: 4008,
  /** The plan's connection limit (cluster-wide) is reached: do not retry at once. */
  connection_limit: 4029,
  /** The resume replay could not be read: reconnect with the same `since`. */
  replay_failed: 1011,
  /** The key was revoked (or deleted) while the socket was open: do not reconnect with it. */
  key_revoked: 4401,
  /** The key's request budget ran out during a replay: resume with `since` after `retry_after`. */
  rate_limited: 4429,
  /** The stream token that opened the connection expired: mint another and resume with `since`. */
  token_expired: 4403,
} as const;
export type StreamCloseReason = keyof typeof STREAM_CLOSE_CODES;
