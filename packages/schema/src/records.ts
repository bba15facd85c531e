/** Reference data, competitions, plays, the account and the report input. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const EVENT_SCHEMA = 'svc.event.v1';
export const PLAY_SCHEMA = 'svc.play.v1';

export const SPORTS = ['soccer', 'basketball', 'tennis', 'golf', 'mma'] as const;
export type Sport = (typeof SPORTS)[number];
export const TEAM_SPORTS: readonly Sport[] = ['soccer', 'basketball'];

export const PRODUCTS = ['live', 'archive', 'report', 'source', 'admin'] as const;
export type Product = (typeof PRODUCTS)[number];

/**
 * A competition's statuses. The transitions between them are the schedule lifecycle's
 * (docs/schedule.md): scheduled → live | postponed | cancelled; live → final | suspended;
 * suspended → live | final | cancelled; postponed → scheduled | cancelled.
 */
export const COMPETITION_STATUSES = ['scheduled', 'live', 'final', 'postponed', 'suspended', 'cancelled'] as const;
export type CompetitionStatus = (typeof COMPETITION_STATUSES)[number];
export const CompetitionStatusSchema = Type.Union(COMPETITION_STATUSES.map((s) => Type.Literal(s)));

export const ExternalIds = Type.Record(Type.String(), Type.String(), {
  description: 'Map of source name to that source’s identifier, so a record resolves across sources.',
});

export const Team = Type.Object(
  {
    id: Type.String({ description: 'team:<league>:<code>' }),
    sport: Type.String(),
    league: Type.String(),
    name: Type.String(),
    code: Type.String({ description: 'Short team code; also used as `team` in events.' }),
    venue: Type.Union([Type.String(), Type.Null()], { description: 'Home venue id, null when the team has none.' }),
    external_ids: ExternalIds,
    synthetic: Type.Boolean({ description: 'True for generated (non-real) data.' }),
  },
  { additionalProperties: false },
);
export type Team = Static<typeof Team>;

export const Player = Type.Object(
  {
    id: Type.String({ description: 'player:<league>:<slug>' }),
    sport: Type.String(),
    league: Type.String(),
    name: Type.String(),
    position: Type.Union([Type.String(), Type.Null()]),
    external_ids: ExternalIds,
    synthetic: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Player = Static<typeof Player>;

export const RosterEntry = Type.Object(
  {
    team_id: Type.String(),
    player_id: Type.String(),
    season: Type.String({ description: 'Season id, <league>_<year>.' }),
    jersey: Type.Optional(Type.Integer()),
    position: Type.Optional(Type.String()),
    from: Type.Optional(Type.String({ description: 'YYYY-MM-DD' })),
    to: Type.Optional(Type.String({ description: 'YYYY-MM-DD' })),
    player: Type.Optional(Type.Object({ name: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type RosterEntry = Static<typeof RosterEntry>;

export const Geo = Type.Object({ lat: Type.Number(), lng: Type.Number() }, { additionalProperties: false });

export const Venue = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    city: Type.String(),
    country: Type.String({ description: 'Country code.' }),
    geo: Type.Union([Geo, Type.Null()]),
    capacity: Type.Union([Type.Integer(), Type.Null()]),
    synthetic: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Venue = Static<typeof Venue>;

export const Season = Type.Object(
  {
    id: Type.String({ description: '<league>_<year>' }),
    league: Type.String(),
    sport: Type.String(),
    label: Type.String(),
    start: Type.String({ description: 'YYYY-MM-DD' }),
    end: Type.String({ description: 'YYYY-MM-DD' }),
    synthetic: Type.Boolean(),
    source: Type.String({ description: 'Where the season’s data comes from.' }),
    competitions: Type.Integer({ description: 'Competitions in this season.' }),
    events: Type.Integer({ description: 'Events recorded for this season.' }),
  },
  { additionalProperties: false },
);
export type Season = Static<typeof Season>;

export const Competitor = Type.Object(
  {
    entity_type: Type.Union([Type.Literal('team'), Type.Literal('player')]),
    entity_id: Type.String(),
    role: Type.String({ description: 'home/away for two sides; p1..pN in golf; red/blue in MMA.' }),
    score: Type.Integer(),
  },
  { additionalProperties: false },
);
export type Competitor = Static<typeof Competitor>;

export const Competition = Type.Object(
  {
    id: Type.String({ description: '<sport>_<league>_<n>' }),
    sport: Type.String(),
    league: Type.String(),
    season: Type.String({ description: 'Season label.' }),
    season_id: Type.String(),
    date: Type.String({ description: 'YYYY-MM-DD' }),
    start_time: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 UTC when known.' }),
    status: CompetitionStatusSchema,
    original_start_time: Type.Union([Type.String(), Type.Null()], { description: 'The first announced start once the start has moved (a postponement), else null.' }),
    status_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the last status change was made (e.g. `Heavy rain`), null when none was given.' }),
    venue: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()], { description: 'Tournament and round, where known.' }),
    group: Type.Union([Type.String(), Type.Null()], {
      description: 'The tournament group a group-stage game belongs to (e.g. `Group A`); null for other games and for seasons without groups. `GET /v1/standings` builds one table per group.',
    }),
    competitors: Type.Array(Competitor),
    synthetic: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Competition = Static<typeof Competition>;

export const Eligibility = Type.Object(
  {
    live: Type.Boolean({ description: 'Events of this game are served to the `live` product (today or live).' }),
    archive: Type.Boolean({ description: 'Events and plays are served to the `archive` product (final, before today).' }),
    reports: Type.Boolean({ description: 'Crowd reports are accepted for this game now.' }),
  },
  { additionalProperties: false },
);

export const Game = Type.Object(
  {
    id: Type.String({ description: '<sport>_<n>' }),
    competition_id: Type.String(),
    sport: Type.String(),
    league: Type.String(),
    season: Type.String(),
    date: Type.String(),
    start_time: Type.Union([Type.String(), Type.Null()]),
    status: CompetitionStatusSchema,
    original_start_time: Competition.properties.original_start_time,
    status_reason: Competition.properties.status_reason,
    venue: Type.Union([Type.String(), Type.Null()]),
    competitors: Type.Array(Competitor),
    eligibility: Eligibility,
    synthetic: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Game = Static<typeof Game>;

export const Period = Type.Object(
  { unit: Type.String(), num: Type.Integer(), label: Type.String() },
  { additionalProperties: false },
);

export const Play = Type.Object(
  {
    competition_id: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    period: Period,
    competitor_id: Type.String(),
    player_id: Type.Optional(Type.String()),
    event_type: Type.String(),
    points: Type.Integer(),
    clock: Type.Optional(Type.String()),
    state: Type.Record(Type.String(), Type.Integer(), { description: 'Running score by role.' }),
    source: Type.String(),
    ts: Type.String(),
    withdraws: Type.Optional(
      Type.String({ description: 'On a `score_withdrawn` play: the play (its `seq`) or the event (`evt_…`) it withdraws, as the source named it (docs/corrections.md).' }),
    ),
    retracted_id: Type.Optional(Type.String({ description: 'On a `score_withdrawn` play: the confirmed event its `score_retracted` event retracted.' })),
    schema: Type.Literal(PLAY_SCHEMA),
  },
  { additionalProperties: false },
);
export type Play = Static<typeof Play>;

/** The play type of an official correction (docs/corrections.md). */
export const SCORE_WITHDRAWN = 'score_withdrawn';


export const ListOf = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass back as `cursor` for the next page.' }),
    },
    { additionalProperties: false },
  );

export const One = <T extends TSchema>(item: T) => Type.Object({ data: item }, { additionalProperties: false });

export const Me = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Type.String(),
    plan: Type.String(),
    products: Type.Array(Type.String()),
    sports: Type.Union([Type.Array(Type.String()), Type.Null()]),
    leagues: Type.Union([Type.Array(Type.String()), Type.Null()]),
    rate_limit: Type.Object({ limit: Type.Integer(), window_s: Type.Integer() }),
    stream_connections: Type.Object({ limit: Type.Integer() }),
  },
  { additionalProperties: false },
);
export type Me = Static<typeof Me>;

export const ReportInput = Type.Object(
  {
    game_id: Type.String({ minLength: 1, maxLength: 64 }),
    team: Type.String({ minLength: 1, maxLength: 64 }),
    points: Type.Integer({ minimum: 1, maximum: 10 }),
    event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    clock: Type.Optional(Type.String({ maxLength: 32 })),
    observed_at: Type.Optional(Type.String({ format: 'date-time' })),
    ref: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    reporter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'The end user this report comes from, opaque to svc (like an id in your app): a key reporting for many people names each, and svc weighs each on its own track record. Reporters without a record count together as one newcomer. Absent: the key’s own voice.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReportInput = Static<typeof ReportInput>;

export const MAX_REPORT_BATCH = 500;
export const ReportBatch = Type.Object(
  { reports: Type.Array(ReportInput, { minItems: 1, maxItems: MAX_REPORT_BATCH }) },
  { additionalProperties: false },
);
export type ReportBatch = Static<typeof ReportBatch>;

export const ReportResult = Type.Object(
  {
    id: Type.String({ description: 'rpt_…' }),
    event_id: Type.Union([Type.String(), Type.Null()], { description: 'The event this report joined (provisional or confirmed).' }),
    tier: Type.Union([Type.Literal('provisional'), Type.Literal('confirmed')]),
  },
  { additionalProperties: false },
);
export type ReportResult = Static<typeof ReportResult>;

export const PlayInput = Type.Object(
  {
    period: Type.Object(
      { unit: Type.String({ minLength: 1, maxLength: 32 }), num: Type.Integer({ minimum: 1, maximum: 100 }), label: Type.String({ minLength: 1, maxLength: 64 }) },
      { additionalProperties: false },
    ),
    competitor_id: Type.String({ minLength: 1, maxLength: 128 }),
    player_id: Type.Optional(Type.String({ minLength: 1, maxLength: 160 })),
    event_type: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_]+$' }),
    points: Type.Integer({ minimum: 0, maximum: 1000 }),
    clock: Type.Optional(Type.String({ maxLength: 32 })),
    ts: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type PlayInput = Static<typeof PlayInput>;

/**
 * An official correction (docs/corrections.md): the source withdraws a confirmed score, a goal
 * disallowed after review. `withdraws` names the play (its `seq` in the competition, as a number
 * or a string) or the confirmed event (`evt_…`, crowd or official). `competitor_id` and `points`,
 * when given, must be the withdrawn score's; `period` defaults to the withdrawn score's.
 */
export const PlayWithdrawalInput = Type.Object(
  {
    event_type: Type.Literal(SCORE_WITHDRAWN),
    withdraws: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })], {
      description: 'The play (`seq`) or the confirmed event (`evt_…`) withdrawn.',
    }),
    period: Type.Optional(PlayInput.properties.period),
    competitor_id: Type.Optional(PlayInput.properties.competitor_id),
    points: Type.Optional(PlayInput.properties.points),
    clock: PlayInput.properties.clock,
    ts: PlayInput.properties.ts,
    source: PlayInput.properties.source,
  },
  { additionalProperties: false },
);
export type PlayWithdrawalInput = Static<typeof PlayWithdrawalInput>;

/** What `POST /v1/competitions/{id}/plays` takes per play: a play, or a correction. */
export type AnyPlayInput = PlayInput | PlayWithdrawalInput;

export const MAX_PLAY_BATCH = 500;
export const PlayBatch = Type.Object({ plays: Type.Array(PlayInput, { minItems: 1, maxItems: MAX_PLAY_BATCH }) }, { additionalProperties: false });
export type PlayBatch = Static<typeof PlayBatch>;

export const MAX_STATUS_REASON = 500;

/** `POST /v1/competitions/{id}/status`: an official source moves a competition (docs/schedule.md). */
export const StatusChangeInput = Type.Object(
  {
    status: CompetitionStatusSchema,
    start_time: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 40, description: 'The new start: required when a postponed competition is scheduled again; also taken with `scheduled` and `postponed`. Between a day before now and five years ahead (else 400 `invalid_field`).' }),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_STATUS_REASON, description: 'Why, for people (`Heavy rain`); kept as `status_reason`.' })),
  },
  { additionalProperties: false },
);
export type StatusChangeInput = Static<typeof StatusChangeInput>;
