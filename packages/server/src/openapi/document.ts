/**
 * The API description. Routes carry their schemas and summaries; this module turns the document
 * @fastify/swagger builds from them into one a reader and a generator can use: named record
 * components with examples from the archive, operation ids and descriptions (operations.ts),
 * declared headers, shared error answers whose codes come from the error catalogue, the
 * Idempotency-Key parameter on every POST, and the webhook bodies under `webhooks`.
 * It changes no schema Fastify validates or serialises with: names are added to copies.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import { Type, type TSchema } from '@sinclair/typebox';
import {
  BoxScore,
  BoxScoreCompetitor,
  BoxScorePeriod,
  BoxScorePlayer,
  Leader,
  PlayerSeasonStats,
  StandingsRow,
  StandingsTable,
  Competition,
  Competitor,
  Confidence,
  CreateWebhookInput,
  DeletedWebhook,
  ERROR_CODES,
  ErrorBody,
  Event,
  Game,
  Me,
  Notification,
  Play,
  PlayInput,
  PlayWithdrawalInput,
  Player,
  ReplayResult,
  Reporter,
  ReportInput,
  StreamToken,
  CreateStreamTokenBody,
  ReportResult,
  RosterEntry,
  Season,
  Team,
  UpdateWebhookInput,
  Venue,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookTestEvent,
  WireEvent,
  type ErrorCode,
} from '@svc/schema';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, ORIGINAL_REQUEST_HEADER, REPLAYED_HEADER } from '../http/idempotency.js';
import {
  ACCOUNT_EXAMPLES,
  ARCHIVE_EXAMPLES,
  CREATE_STREAM_TOKEN_EXAMPLE,
  CREATE_WEBHOOK_EXAMPLE,
  STREAM_TOKEN_EXAMPLE,
  ENDPOINT_WITH_SECRET_EXAMPLE,
  OPERATION_EXAMPLES,
  PLAY_INPUT_EXAMPLE,
  PLAY_WITHDRAWAL_EXAMPLE,
  REPORTER_EXAMPLE,
  REPORT_INPUT_EXAMPLE,
  REPORT_RESULT_EXAMPLE,
  TEST_EVENT_EXAMPLE,
  VIEW_EXAMPLES,
  WEBHOOK_EXAMPLES,
  WIRE_EVENT_EXAMPLE,
} from './examples.js';
import { OPERATIONS, PARAMETER_WORDS } from './operations.js';

type Json = Record<string, unknown>;

/**
 * One line of `GET /v1/export`: the record of the `entity` asked for, as the matching REST list
 * returns it. Generators type the stream's lines from it (the route itself declares no schema:
 * its body is a stream).
 */
const ExportLine = Type.Union([Event, Play, Competition], {
  description: 'One line of the export: an `Event` for `entity=events` (the default), a `Play` for `entity=plays`, a `Competition` for `entity=competitions`.',
});

/** Records that appear in the document under their own name, with an example where one exists. */
const COMPONENTS: readonly { schema: TSchema; name: string; example?: unknown }[] = [
  { schema: Team, name: 'Team', example: ARCHIVE_EXAMPLES.team },
  { schema: Player, name: 'Player', example: ARCHIVE_EXAMPLES.player },
  { schema: RosterEntry, name: 'RosterEntry', example: ARCHIVE_EXAMPLES.rosterEntry },
  { schema: Venue, name: 'Venue', example: ARCHIVE_EXAMPLES.venue },
  { schema: Season, name: 'Season', example: ARCHIVE_EXAMPLES.season },
  { schema: Competitor, name: 'Competitor', example: ARCHIVE_EXAMPLES.competition.competitors[0] },
  { schema: Competition, name: 'Competition', example: ARCHIVE_EXAMPLES.competition },
  { schema: Game, name: 'Game', example: ARCHIVE_EXAMPLES.game },
  { schema: Play, name: 'Play', example: ARCHIVE_EXAMPLES.play },
  { schema: Confidence, name: 'Confidence', example: ARCHIVE_EXAMPLES.event.confidence },
  { schema: Event, name: 'Event', example: ARCHIVE_EXAMPLES.event },
  { schema: WireEvent, name: 'WireEvent', example: WIRE_EVENT_EXAMPLE },
  { schema: WebhookTestEvent, name: 'WebhookTestEvent', example: TEST_EVENT_EXAMPLE },
  { schema: Me, name: 'Me', example: ACCOUNT_EXAMPLES.me },
  { schema: ReportInput, name: 'ReportInput', example: REPORT_INPUT_EXAMPLE },
  { schema: ReportResult, name: 'ReportResult', example: REPORT_RESULT_EXAMPLE },
  { schema: PlayInput, name: 'PlayInput', example: PLAY_INPUT_EXAMPLE },
  { schema: PlayWithdrawalInput, name: 'PlayWithdrawalInput', example: PLAY_WITHDRAWAL_EXAMPLE },
  { schema: WebhookEndpoint, name: 'WebhookEndpoint', example: WEBHOOK_EXAMPLES.endpoint },
  { schema: WebhookEndpointWithSecret, name: 'WebhookEndpointWithSecret', example: ENDPOINT_WITH_SECRET_EXAMPLE },
  { schema: WebhookDelivery, name: 'WebhookDelivery', example: WEBHOOK_EXAMPLES.delivery },
  { schema: WebhookAttempt, name: 'WebhookAttempt' },
  { schema: WebhookDeliveryWithAttempts, name: 'WebhookDeliveryWithAttempts' },
  { schema: CreateWebhookInput, name: 'CreateWebhookInput', example: CREATE_WEBHOOK_EXAMPLE },
  { schema: UpdateWebhookInput, name: 'UpdateWebhookInput', example: { sports: null } },
  { schema: ReplayResult, name: 'ReplayResult' },
  { schema: Reporter, name: 'Reporter', example: REPORTER_EXAMPLE },
  { schema: StreamToken, name: 'StreamToken', example: STREAM_TOKEN_EXAMPLE },
  { schema: CreateStreamTokenBody, name: 'CreateStreamTokenInput', example: CREATE_STREAM_TOKEN_EXAMPLE },
  { schema: DeletedWebhook, name: 'DeletedWebhook' },
  { schema: Notification, name: 'Notification', example: WEBHOOK_EXAMPLES.notification },
  { schema: ExportLine, name: 'ExportLine', example: ARCHIVE_EXAMPLES.event },
  { schema: StandingsTable, name: 'StandingsTable', example: VIEW_EXAMPLES.standings.data[0] },
  { schema: StandingsRow, name: 'StandingsRow', example: VIEW_EXAMPLES.standings.data[0].rows[0] },
  { schema: BoxScore, name: 'BoxScore', example: VIEW_EXAMPLES.boxScore },
  { schema: BoxScoreCompetitor, name: 'BoxScoreCompetitor' },
  { schema: BoxScorePeriod, name: 'BoxScorePeriod' },
  { schema: BoxScorePlayer, name: 'BoxScorePlayer' },
  { schema: Leader, name: 'Leader', example: VIEW_EXAMPLES.leader },
  { schema: PlayerSeasonStats, name: 'PlayerSeasonStats', example: VIEW_EXAMPLES.playerStats },
  {
    schema: ErrorBody,
    name: 'Error',
    example: { error: { type: 'not_found', code: 'resource_not_found', message: "No team with id 'team:wc:XYZ'.", param: 'id', request_id: 'req_Qx3vZ8kLm200000004' } },
  },
];

/** A JSON form with sorted keys: schemas TypeBox rebuilt (Omit, spreads) still find their name. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Json;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const byObject = new Map<object, (typeof COMPONENTS)[number]>(COMPONENTS.map((c) => [c.schema, c]));
const byShape = new Map<string, (typeof COMPONENTS)[number]>(COMPONENTS.map((c) => [canonical(c.schema), c]));
const named = (node: object) => byObject.get(node) ?? byShape.get(canonical(node));

/**
 * A copy of a route schema in which every record carries `$id: <Name>` (and its example), which
 * @fastify/swagger hoists into `components.schemas` under that name. Copies are shared per record
 * so each name is hoisted once.
 */
const copies = new Map<object, unknown>();
const NAME_MARK = 'x-svc-component';
function withNames(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNames);
  if (node === null || typeof node !== 'object') return node;
  const hit = copies.get(node);
  if (hit !== undefined) return hit;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = withNames(v);
  const c = named(node);
  if (c) {
    out.$id = c.name;
    // Swagger inlines a request body's root schema; the mark lets describeApi name it anyway.
    out[NAME_MARK] = c.name;
    if (c.example !== undefined) out.examples = [c.example];
    copies.set(node, out);
  }
  return out;
}

/** A record as a component of its own, its nested records as references (for the parts swagger does not see). */
function component(schema: TSchema): Json {
  const walk = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (node === null || typeof node !== 'object') return node;
    const c = named(node);
    if (c && !root) return { $ref: `#/components/schemas/${c.name}` };
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = walk(v, false);
    if (c?.example !== undefined) out.examples = [c.example];
    return out;
  };
  return walk(schema, true) as Json;
}

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const HEADERS: Json = {
  'X-Request-Id': { description: 'Identifies this request; error bodies quote it as `request_id`.', schema: { type: 'string', examples: ['req_Qx3vZ8kLm200000004'] } },
  'RateLimit-Limit': { description: 'Requests per minute the key’s plan allows.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Requests the key may still make now: the limit less what it spent in the last 60 s (a sliding window).', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the oldest request still counted leaves the 60 s window, so `RateLimit-Remaining` grows; on a 429, the same as `Retry-After`.', schema: { type: 'integer', minimum: 0 } },
  ETag: { description: 'A weak validator of the body’s bytes: send it back as `If-None-Match` and an unchanged answer is a 304 without a body (docs/standings.md).', schema: { type: 'string', examples: ['W/"q0lC8o1mGyhDwh8TGKXtx1P7hzE"'] } },
  'X-Changes-Cursor': { description: 'The change feed’s position for this export: follow `GET /v1/changes?since=<it>` and export plus changes mirror svc exactly.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds after which this request would be admitted (if nothing else is spent meanwhile).', schema: { type: 'integer', minimum: 0 } },
  [REPLAYED_HEADER]: {
    description: `\`true\` when this is the recorded answer of an earlier request with the same ${IDEMPOTENCY_HEADER}; absent otherwise.`,
    schema: { type: 'string', enum: ['true'] },
  },
  [ORIGINAL_REQUEST_HEADER]: { description: 'On a replayed answer: the X-Request-Id of the request that produced it.', schema: { type: 'string' } },
};
const headerRefs = (names: string[]) => Object.fromEntries(names.map((n) => [n, ref('headers', n)]));
const RATE = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

const ERROR_RESPONSES: Record<number, { name: string; text: string; headers: string[] }> = {
  400: { name: 'BadRequest', text: 'The request cannot be served as sent; `param` names the field, parameter or header at fault.', headers: ['X-Request-Id', ...RATE] },
  401: { name: 'Unauthorized', text: 'No valid API key (missing, malformed, unknown, revoked or of another environment).', headers: ['X-Request-Id'] },
  403: { name: 'Forbidden', text: 'The key lacks the product, or the record is outside its sports or leagues.', headers: ['X-Request-Id', ...RATE] },
  404: { name: 'NotFound', text: 'No such record, or not one the key may see.', headers: ['X-Request-Id', ...RATE] },
  409: { name: 'Conflict', text: 'The request conflicts with the state of the record, or with an earlier request under the same Idempotency-Key.', headers: ['X-Request-Id', ...RATE] },
  413: { name: 'PayloadTooLarge', text: 'The request body is over the size limit.', headers: ['X-Request-Id', ...RATE] },
  415: { name: 'UnsupportedMediaType', text: 'The body is not `application/json`.', headers: ['X-Request-Id', ...RATE] },
  410: { name: 'Gone', text: 'The change-feed cursor is older than the changes kept; start again from an export and its `X-Changes-Cursor`.', headers: ['X-Request-Id', ...RATE] },
  429: { name: 'TooManyRequests', text: 'The plan’s requests per minute, or its exports running at once, are used up; retry after `Retry-After` seconds.', headers: ['X-Request-Id', ...RATE, 'Retry-After'] },
};

function errorResponse(status: number): Json {
  const r = ERROR_RESPONSES[status];
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c].status === status);
  return {
    description: `${r.text} \`error.code\` is one of: ${codes.map((c) => `\`${c}\` (${ERROR_CODES[c].description.replace(/\.$/, '')})`).join('; ')}.`,
    headers: headerRefs(r.headers),
    content: { 'application/json': { schema: ref('schemas', 'Error') } },
  };
}

const WEBHOOK_HEADERS = [
  { name: 'X-SVC-Signature', description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`; two `v1` while a rotated secret overlaps. Verify before trusting the body.' },
  { name: 'X-SVC-Event-Id', description: 'The event id: deliveries are at least once, so dedupe on it.' },
  { name: 'X-SVC-Delivery-Id', description: 'The delivery (`dlv_…`); retries keep it.' },
  { name: 'X-SVC-Attempt', description: 'Attempt number, from 1.' },
  { name: 'X-SVC-Topic', description: '`event.<type>`, e.g. `event.score` or `event.test`.' },
];

function webhook(operationId: string, summary: string, description: string, body: string, example: unknown): Json {
  return {
    post: {
      operationId,
      summary,
      description,
      tags: ['webhooks'],
      security: [],
      parameters: WEBHOOK_HEADERS.map((h) => ({ in: 'header', name: h.name, required: true, description: h.description, schema: { type: 'string' } })),
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', body), examples: { [operationId]: { summary, value: example } } } } },
      responses: {
        '200': { description: 'Received. Any 2xx ends the delivery; the body is ignored.' },
        '410': { description: 'Gone: the endpoint is disabled at once and no further deliveries are attempted.' },
        default: { description: 'Anything else (including a redirect or a timeout) is a failure, retried on the schedule until the plan’s attempts run out.' },
      },
    },
  };
}

const TAGS = [
  { name: 'account', description: 'The calling API key.' },
  { name: 'reference', description: 'Teams, players, rosters, venues and seasons.' },
  { name: 'competitions', description: 'Competitions of every sport and their official play-by-play.' },
  { name: 'standings', description: 'Standings, leaders and player totals computed from the games and their official plays, live.' },
  { name: 'games', description: 'Team-sport competitions as games, and their confirmed scoring events.' },
  { name: 'ingestion', description: 'Crowd reports and official plays in.' },
  { name: 'webhooks', description: 'Endpoints that receive confirmed events, their deliveries and notifications.' },
  { name: 'stream', description: 'Tokens for GET /v1/stream from a browser page (the stream itself is described by the AsyncAPI document).' },
  { name: 'replays', description: 'Sandbox replays of finished games through the live pipeline, for the calling key alone.' },
  { name: 'reporters', description: 'The operator’s view of the crowd: reporters’ track records and flags, suspend and restore (product admin).' },
  { name: 'archive', description: 'Bulk export of past seasons.' },
  { name: 'changes', description: 'The change feed: competitions and events as they change, for mirrors.' },
  { name: 'status', description: 'Public service health.' },
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Finishes the document @fastify/swagger built (see the module comment). */
export function describeApi(doc: Json): Json {
  const components = (doc.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Json;
  // Records no route schema mentions (webhook bodies; the error body, whose answers become shared
  // responses) are added here.
  for (const c of COMPONENTS) if (!schemas[c.name]) schemas[c.name] = component(c.schema);
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  const used = new Set<number>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const d = OPERATIONS[key];
      const examples = OPERATION_EXAMPLES[key];
      if (d) {
        op.operationId = d.operationId;
        op.description = d.description;
      }
      // Query parameters typed in @svc/schema (shared with validation) carry few or no words; they get them here.
      for (const p of (op.parameters as Json[] | undefined) ?? []) {
        if (typeof p.name !== 'string' || p.in !== 'query') continue;
        const words = d?.params?.[p.name] ?? PARAMETER_WORDS[p.name];
        if (words) p.description = words;
      }
      const open = Array.isArray(op.security) && op.security.length === 0;
      const post = method === 'post';
      const responses = (op.responses ?? {}) as Record<string, Json>;
      // Unknown query parameters are a 400 on every route.
      if (!responses['400']) responses['400'] = {};
      if (post) {
        for (const s of [409, 413, 415]) if (!responses[s]) responses[s] = {};
        op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), ref('parameters', 'IdempotencyKey')];
      }
      for (const [status, response] of Object.entries(responses)) {
        const code = Number(status);
        if (ERROR_RESPONSES[code]) {
          used.add(code);
          responses[status] = ref('responses', ERROR_RESPONSES[code].name);
          continue;
        }
        if (code === 304) {
          responses[status] = { description: 'Not modified: the answer’s `ETag` matches `If-None-Match`; no body.', headers: headerRefs(['X-Request-Id', 'ETag']) };
          continue;
        }
        response.description = d?.ok ?? response.description;
        const extra = key === 'GET /v1/export' ? ['X-Changes-Cursor'] : key === 'GET /v1/changes' ? ['ETag'] : [];
        response.headers = headerRefs(['X-Request-Id', ...(open ? [] : RATE), ...(post ? [REPLAYED_HEADER, ORIGINAL_REQUEST_HEADER] : []), ...extra]);
        const content = (response.content ?? {}) as Record<string, Json>;
        for (const [type, media] of Object.entries(content)) {
          if (type === 'application/x-ndjson') media.schema = ref('schemas', 'ExportLine');
          if (!examples || !d) continue;
          if ('lines' in examples) media.examples = type === 'application/x-ndjson' ? examples.lines : examples.files?.[type];
          else media.examples = { [d.operationId]: { summary: d.ok, value: examples.response } };
        }
      }
      if (d?.etag) {
        const ok = responses['200'];
        if (ok) ok.headers = { ...((ok.headers ?? {}) as Json), ETag: ref('headers', 'ETag') };
        responses['304'] = { description: 'Not modified: `If-None-Match` named the current `ETag`. No body.', headers: headerRefs(['X-Request-Id', 'ETag', ...RATE]) };
      }
      op.responses = responses;
      const body = (op.requestBody as { content?: Record<string, Json> } | undefined)?.content?.['application/json'];
      if (body && body.schema !== null && typeof body.schema === 'object' && NAME_MARK in body.schema) {
        body.schema = ref('schemas', String((body.schema as Json)[NAME_MARK]));
        delete body.example;
      }
      if (body && examples?.request) body.examples = examples.request;
    }
  }
  for (const s of Object.values(schemas)) if (s !== null && typeof s === 'object') delete (s as Json)[NAME_MARK];
  components.schemas = schemas;
  components.responses = Object.fromEntries([...used].sort().map((s) => [ERROR_RESPONSES[s].name, errorResponse(s)]));
  components.headers = HEADERS;
  components.parameters = {
    IdempotencyKey: {
      in: 'header',
      name: IDEMPOTENCY_HEADER,
      required: false,
      description:
        'Makes a retry safe: the first request with a key runs, later ones with the same key and body get its answer again (`Idempotent-Replayed: true`) for 24 h; the same key with another body is a 409 `idempotency_key_reused`. Keys are per API key. Answers of 500 and above are not kept.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
    },
  };
  return {
    openapi: doc.openapi,
    info: doc.info,
    servers: [{ url: 'http://127.0.0.1:8080', description: 'A local svc (`npm start`); a deployment serves the same paths on its own origin.' }],
    security: doc.security,
    tags: TAGS,
    paths,
    webhooks: {
      event: webhook(
        'receiveEvent',
        'A confirmed scoring event, POSTed to each matching endpoint',
        'The body is the event in its wire form (what the stream sends too). Verify `X-SVC-Signature` over the raw body, dedupe on `X-SVC-Event-Id`, answer 2xx quickly. Deliveries are at least once and unordered.',
        'WireEvent',
        WIRE_EVENT_EXAMPLE,
      ),
      test: webhook(
        'receiveTestEvent',
        'A test event, sent by POST /v1/webhooks/{id}/test',
        'Signed like every delivery, of the additive type `test` (topic `event.test`), outside the retry budget. Consumers that ignore unknown types ignore it.',
        'WebhookTestEvent',
        TEST_EVENT_EXAMPLE,
      ),
    },
    components,
  };
}

/** The @fastify/swagger options: names records in route schemas, then finishes the document. */
export function swaggerOptions(info: Json): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: info as { title: string; version: string },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer svc_test_…` (sandbox) or `svc_live_…` (production).' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }) => ({ schema: withNames(schema) as typeof schema, url }),
    transformObject: (documentObject) => ('openapiObject' in documentObject ? (describeApi(documentObject.openapiObject as Json) as typeof documentObject.openapiObject) : documentObject.swaggerObject),
  };
}
