import type {
  BoxScore,
  Competition,
  Leader,
  PlayerSeasonStats,
  Standings,
  CreateReplayInput,
  CreateWebhookInput,
  DeletedWebhook,
  Event,
  Game,
  Me,
  Notification,
  Play,
  PlayInput,
  PlayWithdrawalInput,
  Player,
  Replay,
  Reporter,
  ReplayInput,
  ReplayResult,
  ReportInput,
  ReportResult,
  RosterEntry,
  StatusEvent,
  Season,
  Team,
  UpdateWebhookInput,
  Venue,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookTestEvent,
  WebhookTestResult,
  WireEvent,
} from '@svc/schema';
import { csvHeader, csvRows, EXPORT_COLUMNS } from '../export/formats.js';

/**
 * Examples of the API description, copied from the real archive (the 2022 World Cup final) so a
 * reader sees data as it is served; the OpenAPI test fetches each one back and compares.
 */
export const ARCHIVE_EXAMPLES = {
  team: {
    id: 'team:wc:ARG',
    sport: 'soccer',
    league: 'wc',
    name: 'Argentina',
    code: 'ARG',
    venue: null,
    external_ids: { fifa: 'ARG', name: 'Argentina' },
    synthetic: false,
  } satisfies Team,
  player: {
    id: 'player:wc:lionel-messi',
    sport: 'soccer',
    league: 'wc',
    name: 'Lionel Messi',
    position: 'FW',
    external_ids: { dob: '1987-06-24', club: 'Inter Miami CF' },
    synthetic: false,
  } satisfies Player,
  rosterEntry: { team_id: 'team:wc:ARG', player_id: 'player:wc:lionel-messi', season: 'wc_2022', player: { name: 'Lionel Messi' } } satisfies RosterEntry,
  venue: {
    id: 'lusail-stadium',
    name: 'Lusail Stadium',
    city: 'Lusail',
    country: 'QA',
    geo: { lat: 25.420861, lng: 51.490389 },
    capacity: 88966,
    synthetic: false,
  } satisfies Venue,
  season: {
    id: 'wc_2022',
    league: 'wc',
    sport: 'soccer',
    label: '2022',
    start: '2022-11-20',
    end: '2022-12-18',
    synthetic: false,
    source: 'openfootball/worldcup.json (CC0)',
    competitions: 64,
    events: 172,
  } satisfies Season,
  competition: {
    id: 'soccer_wc_21728',
    sport: 'soccer',
    league: 'wc',
    season: '2022',
    season_id: 'wc_2022',
    date: '2022-12-18',
    start_time: '2022-12-18T15:00:00.000Z',
    status: 'final',
    original_start_time: null,
    status_reason: null,
    venue: 'lusail-stadium',
    name: 'FIFA World Cup 2022 · Final',
    group: null,
    competitors: [
      { entity_type: 'team', entity_id: 'team:wc:ARG', role: 'home', score: 3 },
      { entity_type: 'team', entity_id: 'team:wc:FRA', role: 'away', score: 3 },
    ],
    synthetic: false,
  } satisfies Competition,
  game: {
    id: 'soccer_21728',
    competition_id: 'soccer_wc_21728',
    sport: 'soccer',
    league: 'wc',
    season: '2022',
    date: '2022-12-18',
    start_time: '2022-12-18T15:00:00.000Z',
    status: 'final',
    original_start_time: null,
    status_reason: null,
    venue: 'lusail-stadium',
    competitors: [
      { entity_type: 'team', entity_id: 'team:wc:ARG', role: 'home', score: 3 },
      { entity_type: 'team', entity_id: 'team:wc:FRA', role: 'away', score: 3 },
    ],
    eligibility: { live: false, archive: true, reports: false },
    synthetic: false,
  } satisfies Game,
  play: {
    competition_id: 'soccer_wc_21728',
    seq: 1,
    period: { unit: 'half', num: 1, label: '1st half' },
    competitor_id: 'team:wc:ARG',
    event_type: 'penalty_goal',
    points: 1,
    state: { home: 1, away: 0 },
    source: 'openfootball',
    ts: '2022-12-18T15:23:00.000Z',
    schema: 'svc.play.v1',
    player_id: 'player:wc:lionel-messi',
    clock: "23'",
  } satisfies Play,
  event: {
    id: 'evt_000000023857',
    type: 'score',
    tier: 'confirmed',
    game_id: 'soccer_21728',
    sport: 'soccer',
    league: 'wc',
    team: 'ARG',
    event_type: 'penalty_goal',
    points: 1,
    clock: "23'",
    ts: '2022-12-18T15:23:00.000Z',
    confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 },
    schema: 'svc.event.v1',
  } satisfies Event,
};

/** Examples of records that belong to a key rather than to the archive. */
export const ACCOUNT_EXAMPLES = {
  me: {
    id: 'key_Ez0REg7gVcy2vFBP',
    name: 'scores-app',
    environment: 'sandbox',
    plan: 'pro',
    products: ['live', 'archive'],
    sports: ['soccer'],
    leagues: null,
    rate_limit: { limit: 1000, window_s: 60 },
    stream_connections: { limit: 25 },
  } satisfies Me,
};

/** The archive event above as the stream and webhooks carry it. */
export const WIRE_EVENT_EXAMPLE: WireEvent = {
  id: 'evt_000000023857',
  type: 'score',
  tier: 'confirmed',
  game_id: 'soccer_21728',
  team: 'ARG',
  points: 1,
  ts: '2022-12-18T15:23:00.000Z',
  confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 },
  schema: 'svc.event.v1',
};

/** The correction of a confirmed goal, in its wire form (docs/corrections.md). */
export const WIRE_CORRECTION_EXAMPLE: WireEvent = {
  id: 'evt_000000023901',
  type: 'score_retracted',
  tier: 'confirmed',
  game_id: 'soccer_21728',
  team: 'ARG',
  points: 1,
  ts: '2022-12-18T15:25:10.000Z',
  confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 },
  retracted_id: 'evt_000000023857',
  schema: 'svc.event.v1',
};

/** A postponement as a `status` event (docs/schedule.md). */
export const STATUS_EVENT_EXAMPLE: StatusEvent = {
  id: 'evt_000000051377',
  type: 'status',
  tier: 'confirmed',
  game_id: 'soccer_30117',
  sport: 'soccer',
  status: 'postponed',
  previous_status: 'scheduled',
  start_time: '2026-06-11T19:00:00.000Z',
  reason: 'Waterlogged pitch',
  ts: '2026-06-11T17:42:08.512Z',
  schema: 'svc.event.v1',
};

/** The competition of that event after the postponement. */
export const POSTPONED_COMPETITION: Competition = {
  ...ARCHIVE_EXAMPLES.competition,
  id: 'soccer_intl_30117',
  league: 'intl',
  season: '2026',
  season_id: 'intl_2026',
  date: '2026-06-11',
  start_time: '2026-06-11T19:00:00.000Z',
  status: 'postponed',
  status_reason: 'Waterlogged pitch',
  venue: null,
  name: null,
  competitors: ARCHIVE_EXAMPLES.competition.competitors.map((c) => ({ ...c, score: 0 })),
  synthetic: true,
};

export const TEST_EVENT_EXAMPLE: WebhookTestEvent = { id: 'evt_test_5mQ2c8VxT1aK9pLr', type: 'test', ts: '2026-06-11T12:00:00.000Z', schema: 'svc.event.v1' };

export const WEBHOOK_EXAMPLES = {
  endpoint: {
    id: 'we_3kT9qLmZ0aB7cD1eF2gH4iJ5',
    url: 'https://example.com/hooks/svc',
    description: 'production scoreboard',
    sports: ['soccer'],
    tier: 'confirmed',
    types: null,
    min_probability: 0,
    status: 'enabled',
    disabled_reason: null,
    disabled_at: null,
    previous_secret_expires_at: null,
    created_at: '2026-06-11T12:00:00.000Z',
    updated_at: '2026-06-11T12:00:00.000Z',
  } satisfies WebhookEndpoint,
  delivery: {
    id: 'dlv_0XyZ12abQ4rS7tUv9wXy1zA2',
    endpoint_id: 'we_3kT9qLmZ0aB7cD1eF2gH4iJ5',
    event_id: 'evt_000000023857',
    status: 'delivered',
    attempts: 1,
    next_attempt_at: null,
    last_attempt_at: '2026-06-11T12:00:00.120Z',
    last_status_code: 200,
    last_error: null,
    created_at: '2026-06-11T12:00:00.000Z',
    delivered_at: '2026-06-11T12:00:00.120Z',
  } satisfies WebhookDelivery,
  notification: {
    id: 'ntf_8hJ2kL4mN6pQ8rS0tU2v',
    type: 'webhook_endpoint.disabled',
    endpoint_id: 'we_3kT9qLmZ0aB7cD1eF2gH4iJ5',
    reason: 'failing',
    message: 'Webhook endpoint we_3kT9qLmZ0aB7cD1eF2gH4iJ5 was disabled: no 2xx answer for 24 hours.',
    created_at: '2026-06-12T12:00:00.000Z',
  } satisfies Notification,
};

export const REPORT_INPUT_EXAMPLE: ReportInput = { game_id: 'soccer_21728', team: 'ARG', points: 1, event_type: 'goal', clock: "23'", ref: 'my-report-1' };
export const REPORT_RESULT_EXAMPLE: ReportResult = { id: 'rpt_7Gh2Jk4Lm6Np8Qr0St2U', event_id: 'evt_000000023857', tier: 'provisional' };
export const PLAY_INPUT_EXAMPLE: PlayInput = {
  period: { unit: 'half', num: 1, label: '1st half' },
  competitor_id: 'team:wc:ARG',
  player_id: 'player:wc:lionel-messi',
  event_type: 'penalty_goal',
  points: 1,
  clock: "23'",
};
/** A goal disallowed after review: the correction names the goal's confirmed event. */
export const PLAY_WITHDRAWAL_EXAMPLE: PlayWithdrawalInput = { event_type: 'score_withdrawn', withdraws: 'evt_000000023857', period: { unit: 'half', num: 1, label: '1st half' }, clock: "25'" };
export const CREATE_WEBHOOK_EXAMPLE: CreateWebhookInput = { url: 'https://example.com/hooks/svc', sports: ['soccer'], tier: 'confirmed' };
export const ENDPOINT_WITH_SECRET_EXAMPLE: WebhookEndpointWithSecret = { ...WEBHOOK_EXAMPLES.endpoint, secret: 'whsec_q3V8xN1mK5pT7rY2wB4zC6dF9gH0jL3nS5uX8aE1iO4' };

export const REPLAY_EXAMPLE: Replay = {
  id: 'rpl_4fT8kP2mQ9xZ1cV7bN3hJ6wR',
  game_id: 'soccer_40213',
  source_game_id: 'soccer_21728',
  speed: 120,
  status: 'running',
  reason: null,
  created_at: '2026-06-11T12:00:00.000Z',
  started_at: '2026-06-11T12:00:00.150Z',
  finished_at: null,
};
/** A fan app's end user whose invented goals official data contradicted: flagged. */
export const REPORTER_EXAMPLE: Reporter = {
  id: 'rep_a2V5XzRmVDhrUDJtUTl4WjFjVjcvZmFuLTgzMTI',
  key_id: 'key_4fT8kP2mQ9xZ1cV7',
  reporter: 'fan-8312',
  weight: 0.2,
  reports: 41,
  agreed: 2,
  disagreed: 6,
  official_confirmed: 1,
  official_contradicted: 3,
  flagged: true,
  suspended: false,
  last_report_at: '2026-06-11T12:00:41.220Z',
};
export const CREATE_STREAM_TOKEN_EXAMPLE = { ttl_s: 900, games: ['soccer_21728'] };
export const STREAM_TOKEN_EXAMPLE = {
  token: 'sst_3f9c1a7be2d04c55.q2Vn8rT0kLmZ4xYa.Wk9wQ1J2dXNaM0x5N2hGbmRzY2V4cE5oZ2JzUkJ2c3Rq.Jx8mPq2sVb7nLr4tYw1zKc',
  expires_at: '2026-06-11T12:15:00.000Z',
  sports: null,
  leagues: null,
  games: ['soccer_21728'],
};
export const CREATE_REPLAY_EXAMPLE: CreateReplayInput = { game_id: 'soccer_21728', speed: 120 };

/** A cursor as the API issues them: opaque, pass it back as `cursor`. */
const CURSOR = 'WyJ0ZWFtOndjOkFSRyJd';
const page = <T>(item: T): { data: T[]; next_cursor: string | null } => ({ data: [item], next_cursor: CURSOR });
const one = <T>(record: T): { data: T } => ({ data: record });

const STATUS_EXAMPLE = {
  data: {
    status: 'operational',
    generated_at: '2026-06-11T12:00:00.000Z',
    uptime_target: '99.9%',
    sports: [
      {
        sport: 'soccer',
        status: 'operational',
        live_games: 2,
        events_last_5m: 3,
        last_event_at: '2026-06-11T11:58:41.000Z',
        confirmation_p50_ms: 1840,
        uptime_90d: 0.9996,
        days: [
          { date: '2026-06-10', uptime: 1 },
          { date: '2026-06-11', uptime: 0.9986 },
        ],
      },
    ],
    channels: [
      { channel: 'rest', status: 'operational' },
      { channel: 'stream', status: 'operational' },
      { channel: 'webhooks', status: 'operational' },
    ],
    incidents: [],
  },
};

const DELIVERY_WITH_ATTEMPTS: WebhookDeliveryWithAttempts = {
  ...WEBHOOK_EXAMPLES.delivery,
  attempt_log: [{ attempt: 1, at: '2026-06-11T12:00:00.000Z', status_code: 200, duration_ms: 120, error: null, response_excerpt: 'ok' }],
};
const TEST_RESULT: WebhookTestResult = {
  endpoint_id: WEBHOOK_EXAMPLES.endpoint.id,
  event_id: TEST_EVENT_EXAMPLE.id,
  delivery_id: 'dlv_test_7Rk2Vb9Qx4Lm1Np8',
  delivered: true,
  status_code: 200,
  duration_ms: 84,
  response_excerpt: 'ok',
  error: null,
  sent_at: '2026-06-11T12:00:00.000Z',
};
const REPLAY_BY_DELIVERY: ReplayInput = { delivery_id: WEBHOOK_EXAMPLES.delivery.id };
const REPLAY_BY_RANGE: ReplayInput = { from: '2026-06-11T00:00:00.000Z', to: '2026-06-11T12:00:00.000Z' };
const REPLAY_RESULT: ReplayResult = { replayed: 1, delivery_ids: ['dlv_0XyZ12abQ4rS7tUv9wXy3zB4'] };
const DELETED: DeletedWebhook = { id: WEBHOOK_EXAMPLES.endpoint.id, deleted: true };
const UPDATE_WEBHOOK: UpdateWebhookInput = { sports: null, description: 'every sport in scope' };

/** A named example of a request body. */
export interface BodyExample {
  summary: string;
  value: unknown;
}

/**
 * The examples of one operation: its success answer's body (or, for NDJSON, one line of each
 * kind), and its request body's when it has one.
 */
export type OperationExamples = ({ response: unknown } | { lines: Record<string, BodyExample>; files?: Record<string, Record<string, BodyExample | { summary: string; description: string }>> }) & {
  request?: Record<string, BodyExample>;
};

/** A CSV export of one record: the header and its row, as `format=csv` writes them. */
const csvExample = (entity: 'events' | 'plays' | 'competitions', record: unknown): string => csvHeader(EXPORT_COLUMNS[entity]) + csvRows(EXPORT_COLUMNS[entity], [record]);

/**
 * Each operation's examples, keyed as OPERATIONS is (method and OpenAPI path); the OpenAPI test
 * fails on an operation without one. Records are the archive's, so answers read as served.
 */
/** Standings, box score and leaders as the archive answers them (FIFA World Cup 2022). */
export const VIEW_EXAMPLES = {
  standings: {
    data: [
      {
        group: 'Group C',
        rows: [
          { rank: 1, entity_id: 'team:wc:ARG', played: 3, won: 2, drawn: 0, lost: 1, scored: 5, conceded: 2, diff: 3, points: 6, live: false },
          { rank: 2, entity_id: 'team:wc:POL', played: 3, won: 1, drawn: 1, lost: 1, scored: 2, conceded: 2, diff: 0, points: 4, live: false },
          { rank: 3, entity_id: 'team:wc:MEX', played: 3, won: 1, drawn: 1, lost: 1, scored: 2, conceded: 3, diff: -1, points: 4, live: false },
          { rank: 4, entity_id: 'team:wc:KSA', played: 3, won: 1, drawn: 0, lost: 2, scored: 3, conceded: 5, diff: -2, points: 3, live: false },
        ],
      },
    ],
    as_of: '2022-11-30T20:52:00.000Z',
  } satisfies Standings,
  boxScore: {
    competition_id: 'soccer_wc_21728',
    sport: 'soccer',
    status: 'final',
    competitors: [
      {
        entity_id: 'team:wc:ARG',
        role: 'home',
        score: 3,
        periods: [
          { unit: 'half', num: 1, label: '1st half', points: 2 },
          { unit: 'half', num: 2, label: '2nd half', points: 0 },
          { unit: 'extra_time', num: 1, label: 'Extra time 1st half', points: 0 },
          { unit: 'extra_time', num: 2, label: 'Extra time 2nd half', points: 1 },
        ],
        shootout: 4,
      },
      {
        entity_id: 'team:wc:FRA',
        role: 'away',
        score: 3,
        periods: [
          { unit: 'half', num: 1, label: '1st half', points: 0 },
          { unit: 'half', num: 2, label: '2nd half', points: 2 },
          { unit: 'extra_time', num: 1, label: 'Extra time 1st half', points: 0 },
          { unit: 'extra_time', num: 2, label: 'Extra time 2nd half', points: 1 },
        ],
        shootout: 2,
      },
    ],
    players: [
      { player_id: 'player:wc:kylian-mbappe', competitor_id: 'team:wc:FRA', points: 3, by_type: { goal: 1, penalty_goal: 2 } },
      { player_id: 'player:wc:lionel-messi', competitor_id: 'team:wc:ARG', points: 2, by_type: { goal: 1, penalty_goal: 1 } },
      { player_id: 'player:wc:angel-di-maria', competitor_id: 'team:wc:ARG', points: 1, by_type: { goal: 1 } },
    ],
    winner: 'team:wc:ARG',
    as_of: '2022-12-18T17:55:00.000Z',
  } satisfies BoxScore,
  leader: { rank: 1, player_id: 'player:wc:kylian-mbappe', competitor_id: 'team:wc:FRA', value: 8 } satisfies Leader,
  playerStats: { league: 'wc', season: '2022', competitor_id: 'team:wc:FRA', points: 8, by_type: { goal: 6, penalty_goal: 2 } } satisfies PlayerSeasonStats,
};

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  'GET /v1/status': { response: STATUS_EXAMPLE },
  'GET /v1/me': { response: one(ACCOUNT_EXAMPLES.me) },
  'GET /v1/teams': { response: page(ARCHIVE_EXAMPLES.team) },
  'GET /v1/teams/{id}': { response: one(ARCHIVE_EXAMPLES.team) },
  'GET /v1/teams/{id}/roster': { response: page(ARCHIVE_EXAMPLES.rosterEntry) },
  'GET /v1/players': { response: page(ARCHIVE_EXAMPLES.player) },
  'GET /v1/players/{id}': { response: one(ARCHIVE_EXAMPLES.player) },
  'GET /v1/venues': { response: page(ARCHIVE_EXAMPLES.venue) },
  'GET /v1/venues/{id}': { response: one(ARCHIVE_EXAMPLES.venue) },
  'GET /v1/seasons': { response: page(ARCHIVE_EXAMPLES.season) },
  'GET /v1/competitions': { response: page(ARCHIVE_EXAMPLES.competition) },
  'GET /v1/competitions/{id}': { response: one(ARCHIVE_EXAMPLES.competition) },
  'GET /v1/competitions/{id}/plays': { response: page(ARCHIVE_EXAMPLES.play) },
  'GET /v1/competitions/{id}/boxscore': { response: one(VIEW_EXAMPLES.boxScore) },
  'GET /v1/standings': { response: VIEW_EXAMPLES.standings },
  'GET /v1/leaders': { response: page(VIEW_EXAMPLES.leader) },
  'GET /v1/players/{id}/stats': { response: page(VIEW_EXAMPLES.playerStats) },
  'POST /v1/competitions/{id}/plays': {
    response: { data: [ARCHIVE_EXAMPLES.play] },
    request: {
      one: { summary: 'One play', value: PLAY_INPUT_EXAMPLE },
      batch: { summary: 'A batch (up to 500), applied in order', value: { plays: [PLAY_INPUT_EXAMPLE] } },
      withdrawal: { summary: 'A goal disallowed after review (docs/corrections.md)', value: PLAY_WITHDRAWAL_EXAMPLE },
    },
  },
  'GET /v1/games': { response: page(ARCHIVE_EXAMPLES.game) },
  'GET /v1/games/{id}': { response: one(ARCHIVE_EXAMPLES.game) },
  'GET /v1/games/{id}/events': { response: page(ARCHIVE_EXAMPLES.event) },
  'POST /v1/competitions/{id}/status': {
    response: one(POSTPONED_COMPETITION),
    request: {
      postpone: { summary: 'Postpone, with a reason', value: { status: 'postponed', reason: 'Waterlogged pitch' } },
      reschedule: { summary: 'Schedule a postponed game again', value: { status: 'scheduled', start_time: '2026-06-14T19:00:00Z' } },
    },
  },
  'GET /v1/changes': {
    response: {
      data: [
        { id: 'chg_000000001204', type: 'event.created', object_id: STATUS_EVENT_EXAMPLE.id, object: STATUS_EVENT_EXAMPLE, at: STATUS_EVENT_EXAMPLE.ts },
        { id: 'chg_000000001205', type: 'competition.updated', object_id: POSTPONED_COMPETITION.id, object: POSTPONED_COMPETITION, at: STATUS_EVENT_EXAMPLE.ts },
      ],
      next_cursor: 'WyJjaGciLDEyMDVd',
    },
  },
  'POST /v1/reports': {
    response: { data: [REPORT_RESULT_EXAMPLE] },
    request: {
      one: { summary: 'One report', value: REPORT_INPUT_EXAMPLE },
      batch: { summary: 'A batch (up to 500); one bad report rejects the batch', value: { reports: [REPORT_INPUT_EXAMPLE] } },
    },
  },
  'POST /v1/webhooks': { response: one(ENDPOINT_WITH_SECRET_EXAMPLE), request: { soccer: { summary: 'Confirmed soccer events', value: CREATE_WEBHOOK_EXAMPLE } } },
  'GET /v1/webhooks': { response: page(WEBHOOK_EXAMPLES.endpoint) },
  'GET /v1/webhooks/{id}': { response: one(WEBHOOK_EXAMPLES.endpoint) },
  'PATCH /v1/webhooks/{id}': {
    response: one({ ...WEBHOOK_EXAMPLES.endpoint, sports: null, description: UPDATE_WEBHOOK.description ?? null }),
    request: { allSports: { summary: 'Every sport in the key’s scope', value: UPDATE_WEBHOOK } },
  },
  'DELETE /v1/webhooks/{id}': { response: one(DELETED) },
  'POST /v1/stream/tokens': {
    response: one(STREAM_TOKEN_EXAMPLE),
    request: {
      game: { summary: 'One game, for 15 minutes', value: CREATE_STREAM_TOKEN_EXAMPLE },
      defaults: { summary: 'Everything the key sees, for an hour', value: {} },
    },
  },
  'POST /v1/replays': {
    response: one({ ...REPLAY_EXAMPLE, status: 'scheduled', started_at: null }),
    request: { final: { summary: 'The 2022 World Cup final at 120×', value: CREATE_REPLAY_EXAMPLE } },
  },
  'GET /v1/replays': { response: page(REPLAY_EXAMPLE) },
  'GET /v1/reporters': { response: page(REPORTER_EXAMPLE) },
  'POST /v1/reporters/{id}/suspend': { response: one({ ...REPORTER_EXAMPLE, suspended: true }) },
  'POST /v1/reporters/{id}/restore': { response: one(REPORTER_EXAMPLE) },
  'GET /v1/replays/{id}': { response: one(REPLAY_EXAMPLE) },
  'DELETE /v1/replays/{id}': { response: one({ ...REPLAY_EXAMPLE, status: 'cancelled', reason: 'cancelled by its key', finished_at: '2026-06-11T12:01:00.000Z' }) },
  'GET /v1/webhooks/{id}/deliveries': { response: page(WEBHOOK_EXAMPLES.delivery) },
  'GET /v1/webhooks/{id}/deliveries/{delivery_id}': { response: one(DELIVERY_WITH_ATTEMPTS) },
  'POST /v1/webhooks/{id}/replay': {
    response: one(REPLAY_RESULT),
    request: {
      delivery: { summary: 'One delivery again', value: REPLAY_BY_DELIVERY },
      range: { summary: 'Every event of a time range', value: REPLAY_BY_RANGE },
    },
  },
  'POST /v1/webhooks/{id}/enable': { response: one(WEBHOOK_EXAMPLES.endpoint) },
  'POST /v1/webhooks/{id}/rotate-secret': {
    response: one({ ...ENDPOINT_WITH_SECRET_EXAMPLE, previous_secret_expires_at: '2026-06-12T12:00:00.000Z' }),
  },
  'POST /v1/webhooks/{id}/test': { response: one(TEST_RESULT) },
  'GET /v1/notifications': { response: page(WEBHOOK_EXAMPLES.notification) },
  // NDJSON: the schema and the examples are of one line, one per entity.
  'GET /v1/export': {
    lines: {
      events: { summary: 'A line of `entity=events` (the default): an Event', value: ARCHIVE_EXAMPLES.event },
      plays: { summary: 'A line of `entity=plays`: a Play', value: ARCHIVE_EXAMPLES.play },
      competitions: { summary: 'A line of `entity=competitions`: a Competition', value: ARCHIVE_EXAMPLES.competition },
    },
    files: {
      'text/csv': {
        events: { summary: '`format=csv`, `entity=events`: the header and one row (nested fields as dotted columns)', value: csvExample('events', ARCHIVE_EXAMPLES.event) },
        plays: { summary: '`format=csv`, `entity=plays` (`state` as JSON)', value: csvExample('plays', ARCHIVE_EXAMPLES.play) },
        competitions: { summary: '`format=csv`, `entity=competitions` (`competitors` as JSON)', value: csvExample('competitions', ARCHIVE_EXAMPLES.competition) },
      },
      'application/vnd.apache.parquet': {
        parquet: {
          summary: '`format=parquet`: a binary Parquet file',
          description: 'The CSV columns, typed: strings UTF8, integers INT32, `confidence.agreement` DOUBLE, `ts` and `start_time` TIMESTAMP (UTC, ms), `date` DATE, `competitors` and `state` JSON; row groups of 10,000 rows, snappy.',
        },
      },
    },
  },
};
