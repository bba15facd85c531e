/**
 * The stream protocol as an AsyncAPI 3 document, built from the same schemas the gateway's frames
 * are typed with (`@svc/schema`), served at `/v1/asyncapi.json`.
 */
import type { TSchema } from '@sinclair/typebox';
import {
  Confidence,
  ErrorFrame,
  HeartbeatFrame,
  PingMessage,
  PongFrame,
  STREAM_CLOSE_CODES,
  STREAM_PATH,
  STREAM_MESSAGE_ERRORS,
  SubscribeMessage,
  SubscribedFrame,
  WireScoreEvent,
  StatusEvent,
} from '@svc/schema';
import { STATUS_EVENT_EXAMPLE, WIRE_CORRECTION_EXAMPLE, WIRE_EVENT_EXAMPLE } from './examples.js';

type Json = Record<string, unknown>;

/** Plain JSON Schema (TypeBox's symbols dropped), Confidence as a reference. */
function schema(s: TSchema): Json {
  const walk = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (node === null || typeof node !== 'object') return node;
    if (!root && node === Confidence) return { $ref: '#/components/schemas/Confidence' };
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, false)]));
  };
  return walk(s, true) as Json;
}

const message = (name: string, title: string, summary: string, payload: TSchema, examples: unknown[]): Json => ({
  name,
  title,
  summary,
  contentType: 'application/json',
  payload: schema(payload),
  examples: examples.map((e) => ({ payload: e })),
});

const closeCodes = [
  `${STREAM_CLOSE_CODES.going_away}: the server is shutting down; reconnect (to any node) with \`since\`.`,
  `${STREAM_CLOSE_CODES.slow_consumer} (\`slow_consumer\`): the unsent buffer passed 1 MiB; reconnect with \`since\`.`,
  `${STREAM_CLOSE_CODES.connection_limit}: the plan's connection limit (counted across the cluster) is reached; do not reconnect at once.`,
  `${STREAM_CLOSE_CODES.key_revoked} (\`key_revoked\`): the key (or the key of the stream token) was revoked; do not reconnect with it.`,
  `${STREAM_CLOSE_CODES.token_expired} (\`token_expired\`): the stream token expired; mint another and reconnect with \`since\`.`,
  `${STREAM_CLOSE_CODES.rate_limited} (\`rate_limited\`): the key's request budget ran out during a resume; reconnect with \`since\` after \`retry_after\`.`,
].join('\n- ');

export function asyncApiDocument(): Json {
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'svc stream',
      version: '1.0.0',
      description: [
        'Live scoring events over one WebSocket: `GET /v1/stream` with `Authorization: Bearer <API_KEY>`, product `live`. A browser page passes a stream token instead (`?token=sst_…`, minted by its back end with `POST /v1/stream/tokens`), never a key.',
        'The same frames are served as server-sent events to `GET /v1/stream` with `Accept: text/event-stream`: one message per frame, `id:` the event id, `event:` its `type` (control frames: `subscribed`, `error`, and `close` before the server ends the response), `data:` the frame’s JSON; `Last-Event-ID` resumes like `since`; a comment line after 15 s of silence instead of `heartbeat`.',
        'Query: `sport`, `league`, `game` (comma lists; none = everything the key may see), `tier` (`provisional` | `confirmed`, default both), `types` (comma list of event types: `score`, `score_retracted`, `status`; default all), `since=<event id>` to resume, `delay=<0..300>` to hold every event until that many seconds after its `ts` (heartbeats are not held), `min_probability=<0..1>` to leave out events whose `confidence.probability` is below it (a `score_retracted` of an event that was sent is always sent; a `subscribe` message may change it).',
        'Authentication and scope failures are refused before the upgrade with the JSON error body of the REST API (401/403).',
        'The server first sends `subscribed` (with `recovered: true` when every event after `since` that the key may read was replayed, in order, before live ones: `since` an event of the last 24 h, at most 10,000 events; without the `archive` product, events of competitions settled before today are not replayed),',
        'then events and control frames, told apart by `type`. After 5 s without a frame it sends `heartbeat`; treat two heartbeat periods of silence as a dead link and reconnect with `since=<last id>`.',
        `Close codes:\n- ${closeCodes}`,
        `Errors of client messages (\`error\` frames, the connection stays open) carry a REST error code or one of: ${Object.entries(STREAM_MESSAGE_ERRORS)
          .map(([c, d]) => `\`${c}\` (${d.replace(/\.$/, '')})`)
          .join('; ')}.`,
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      local: {
        host: '127.0.0.1:8080',
        protocol: 'ws',
        description: 'A local svc (`npm start`); a deployment serves the stream on its own origin (wss:// behind TLS).',
        security: [{ $ref: '#/components/securitySchemes/bearer' }],
      },
    },
    channels: {
      stream: {
        address: STREAM_PATH,
        title: 'Event stream',
        description: 'One connection per client; its filter is set by the query and changed by `subscribe` / `unsubscribe` messages.',
        servers: [{ $ref: '#/servers/local' }],
        messages: {
          event: { $ref: '#/components/messages/event' },
          status: { $ref: '#/components/messages/status' },
          subscribed: { $ref: '#/components/messages/subscribed' },
          heartbeat: { $ref: '#/components/messages/heartbeat' },
          pong: { $ref: '#/components/messages/pong' },
          error: { $ref: '#/components/messages/error' },
          subscribe: { $ref: '#/components/messages/subscribe' },
          ping: { $ref: '#/components/messages/ping' },
        },
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              additionalProperties: false,
              properties: {
                sport: { type: 'string', description: 'Comma list of sports.' },
                league: { type: 'string', description: 'Comma list of leagues.' },
                game: { type: 'string', description: 'Comma list of game ids (`<sport>_<n>`).' },
                tier: { type: 'string', enum: ['provisional', 'confirmed'] },
                types: { type: 'string', description: 'Comma list of event types (`score`, `score_retracted`, `status`); default all.' },
                since: { type: 'string', description: 'Resume after this event id (`evt_…`): an event of the last 24 h; `evt_0`, an older or unknown id replays nothing (`recovered: false`); an id past the newest event is refused with 400 `invalid_parameter` before the upgrade.' },
                delay: { type: 'integer', minimum: 0, maximum: 300, description: 'Hold every event until this many seconds after its `ts` (a broadcast delay; heartbeats are not held).' },
                min_probability: {
                  type: 'number',
                  minimum: 0,
                  maximum: 1,
                  description: 'Leave out events whose `confidence.probability` is below this (0: every event); official events carry 1. A `score_retracted` of an event that was sent is always sent.',
                },
                token: { type: 'string', description: 'A stream token (`sst_…`, POST /v1/stream/tokens): how a browser page authenticates without an API key.' },
                access_token: { type: 'string', description: 'The API key, for clients that cannot set headers and are not public pages (pages use `token`).' },
              },
            },
          },
        },
      },
    },
    operations: {
      receiveEvents: {
        action: 'receive',
        channel: { $ref: '#/channels/stream' },
        summary:
          'Events matching the filter (scoring events, provisional and confirmed, `score_retracted`, and `status` changes), each serialised once per broadcast. A `score_retracted` of tier `provisional` withdraws a provisional never confirmed; one of tier `confirmed` corrects a confirmed score (an official `score_withdrawn`, or the official final result), its `retracted_id` naming it (docs/corrections.md).',
        messages: [{ $ref: '#/channels/stream/messages/event' }, { $ref: '#/channels/stream/messages/status' }],
      },
      receiveControl: {
        action: 'receive',
        channel: { $ref: '#/channels/stream' },
        summary: 'Control frames: `subscribed`, `heartbeat`, `pong`, `error`.',
        messages: [
          { $ref: '#/channels/stream/messages/subscribed' },
          { $ref: '#/channels/stream/messages/heartbeat' },
          { $ref: '#/channels/stream/messages/pong' },
          { $ref: '#/channels/stream/messages/error' },
        ],
      },
      changeSubscription: {
        action: 'send',
        channel: { $ref: '#/channels/stream' },
        summary: 'Add to or remove from the filter; answered by `subscribed` with the whole filter, or `error`.',
        messages: [{ $ref: '#/channels/stream/messages/subscribe' }],
      },
      ping: {
        action: 'send',
        channel: { $ref: '#/channels/stream' },
        summary: 'Application-level ping; answered by `pong`.',
        messages: [{ $ref: '#/channels/stream/messages/ping' }],
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The API key; a browser page passes a stream token as `?token=` instead.' } },
      schemas: { Confidence: schema(Confidence) },
      messages: {
        event: message('event', 'Event', 'A scoring event in its wire form (as webhook bodies carry it).', WireScoreEvent, [WIRE_EVENT_EXAMPLE, WIRE_CORRECTION_EXAMPLE]),
        status: message('status', 'Status', 'A competition’s status changed (postponed, suspended, cancelled, …): `type` `status`, as webhook bodies carry it. Ignore event types you do not know.', StatusEvent, [STATUS_EVENT_EXAMPLE]),
        subscribed: message('subscribed', 'Subscribed', 'The connection’s whole filter, after setup and after each subscribe/unsubscribe.', SubscribedFrame, [
          { type: 'subscribed', recovered: true, sports: ['soccer'], leagues: [], games: [], tier: null },
        ]),
        heartbeat: message('heartbeat', 'Heartbeat', 'Sent after 5 s without any other frame.', HeartbeatFrame, [{ type: 'heartbeat' }]),
        pong: message('pong', 'Pong', 'The answer to `{"op": "ping"}`.', PongFrame, [{ type: 'pong' }]),
        error: message('error', 'Error', 'A client message the server could not act on.', ErrorFrame, [
          { type: 'error', code: 'sport_not_in_scope', message: 'This key is not scoped to sport basketball.', param: 'sport' },
        ]),
        subscribe: message('subscribe', 'Subscribe or unsubscribe', 'Changes the filter.', SubscribeMessage, [{ op: 'subscribe', games: ['soccer_21728'] }]),
        ping: message('ping', 'Ping', 'Asks for a `pong`.', PingMessage, [{ op: 'ping' }]),
      },
    },
  };
}
