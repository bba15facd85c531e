/**
 * Query parameters of the list operations, `GET /v1/export` and `GET /v1/stream`. The server
 * validates requests with these (unknown parameters are a 400) and the clients type their
 * params with them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES, TIERS } from './events.js';
import { COMPETITION_STATUSES, SPORTS } from './records.js';
import { DeliveryStatus } from './webhooks.js';

export const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size, 1..1000.' });
export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'The `next_cursor` of the previous page.' });
export const SportParam = Type.Union(SPORTS.map((s) => Type.Literal(s)), { description: 'Sport.' });
export const LeagueParam = Type.String({ pattern: '^[a-z0-9]{1,16}$', description: 'League id, e.g. `wc`.' });
export const SeasonParam = Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'Season id (`wc_2022`) or label (`2022`).' });
export const DateParam = Type.String({ pattern: '^(today|\\d{4}-\\d{2}-\\d{2})$', description: '`today` or YYYY-MM-DD: a UTC date matched on the competition\'s `date`, or with `tz` that day in that zone matched on `start_time`.' });
export const TzParam = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone (`America/New_York`) for `date`: the calendar day in that zone (and `today` is today there), matched on `start_time`. Without it `date` is a UTC date.',
  examples: ['America/New_York'],
});
export const StatusParam = Type.Union(COMPETITION_STATUSES.map((s) => Type.Literal(s)));
export const TeamIdParam = Type.String({ pattern: '^team:[a-z0-9]{1,16}:[A-Za-z0-9-]{1,64}$', description: 'Team id.' });
export const PlayerIdParam = Type.String({ pattern: '^player:[a-z0-9]{1,16}:[a-z0-9-]{1,128}$', description: 'Player id.' });

/**
 * `types`: a comma list of event types (`score,status`); default all. A name svc does not know is
 * a 400, like any bad value, so a typo never silently empties a read.
 */
export const TypesParam = Type.String({
  pattern: `^(${EVENT_TYPES.join('|')})(,(${EVENT_TYPES.join('|')}))*$`,
  maxLength: 100,
  description: `Comma list of event types: ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. Default: all.`,
});

/** `limit` and `cursor`, taken by every list. */
export const pageQuery = { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) };
const closed = { additionalProperties: false } as const;

export const PageQuery = Type.Object({ ...pageQuery }, closed);
export type PageQuery = Static<typeof PageQuery>;

/** `GET /v1/games/{id}/events`: a page, and the event types wanted. */
export const GameEventsQuery = Type.Object({ types: Type.Optional(TypesParam), ...pageQuery }, closed);
export type GameEventsQuery = Static<typeof GameEventsQuery>;

export const CHANGE_TYPES = ['competition.created', 'competition.updated', 'event.created'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
export const MAX_CHANGES_WAIT_S = 30;

/** `GET /v1/changes` (docs/changes.md). */
export const ChangesQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'The `next_cursor` of the previous answer, or an export’s `X-Changes-Cursor`. Without it: the oldest change kept. A cursor the feed never issued (one past its end included) is 400 `invalid_cursor`.' })),
    limit: Type.Optional(Limit),
    types: Type.Optional(
      Type.String({
        pattern: `^(${CHANGE_TYPES.join('|').replace(/\./g, '\\.')})(,(${CHANGE_TYPES.join('|').replace(/\./g, '\\.')}))*$`,
        maxLength: 100,
        description: `Comma list of change types: ${CHANGE_TYPES.map((t) => `\`${t}\``).join(', ')}. Default: all.`,
      }),
    ),
    wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CHANGES_WAIT_S, description: 'Seconds (0..30) to hold an empty answer until a change arrives. Default 0.' })),
  },
  closed,
);
export type ChangesQuery = Static<typeof ChangesQuery>;

export const ListTeamsQuery = Type.Object({ sport: Type.Optional(SportParam), league: Type.Optional(LeagueParam), ...pageQuery }, closed);
export type ListTeamsQuery = Static<typeof ListTeamsQuery>;

export const RosterQuery = Type.Object({ season: Type.Optional(SeasonParam), ...pageQuery }, closed);
export type RosterQuery = Static<typeof RosterQuery>;

export const ListPlayersQuery = Type.Object(
  {
    sport: Type.Optional(SportParam),
    league: Type.Optional(LeagueParam),
    team: Type.Optional(TeamIdParam),
    season: Type.Optional(SeasonParam),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Name contains, accent and case insensitive.' })),
    ...pageQuery,
  },
  closed,
);
export type ListPlayersQuery = Static<typeof ListPlayersQuery>;

export const ListVenuesQuery = Type.Object({ sport: Type.Optional(SportParam), league: Type.Optional(LeagueParam), ...pageQuery }, closed);
export type ListVenuesQuery = Static<typeof ListVenuesQuery>;

export const ListSeasonsQuery = Type.Object({ league: Type.Optional(LeagueParam), sport: Type.Optional(SportParam), ...pageQuery }, closed);
export type ListSeasonsQuery = Static<typeof ListSeasonsQuery>;

/** The filters of competitions and games. */
export const competitionFilters = {
  sport: Type.Optional(SportParam),
  league: Type.Optional(LeagueParam),
  season: Type.Optional(SeasonParam),
  date: Type.Optional(DateParam),
  tz: Type.Optional(TzParam),
  team: Type.Optional(TeamIdParam),
  player: Type.Optional(PlayerIdParam),
  status: Type.Optional(StatusParam),
};

export const ListCompetitionsQuery = Type.Object({ ...competitionFilters, ...pageQuery }, closed);
export type ListCompetitionsQuery = Static<typeof ListCompetitionsQuery>;

export const ListGamesQuery = Type.Object(
  { ...competitionFilters, sport: Type.Optional(Type.Union([Type.Literal('soccer'), Type.Literal('basketball')])), ...pageQuery },
  closed,
);
export type ListGamesQuery = Static<typeof ListGamesQuery>;

export const ListDeliveriesQuery = Type.Object({ status: Type.Optional(DeliveryStatus), ...pageQuery }, closed);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const EXPORT_ENTITIES = ['events', 'plays', 'competitions'] as const;
export type ExportEntity = (typeof EXPORT_ENTITIES)[number];
export const EXPORT_FORMATS = ['ndjson', 'csv', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const Bound = (which: string) =>
  Type.String({
    minLength: 1,
    maxLength: 40,
    description: `${which} ISO 8601 date (\`2022-11-20\`, midnight UTC) or date-time (\`2022-11-20T18:00:00Z\`, UTC when no offset), applied to \`ts\` for events and to the competition's \`date\` for plays and competitions.`,
  });

export const ExportQuery = Type.Object(
  {
    league: LeagueParam,
    season: SeasonParam,
    // An enum (not a union of literals) so a wrong value reads "must be equal to one of the allowed values".
    entity: Type.Optional(Type.Unsafe<ExportEntity>({ type: 'string', enum: [...EXPORT_ENTITIES], description: '`events` (default), `plays` or `competitions`.' })),
    types: Type.Optional(Type.String({ ...TypesParam, description: `${TypesParam.description} Events only.` })),
    format: Type.Optional(
      Type.Unsafe<ExportFormat>({
        type: 'string',
        enum: [...EXPORT_FORMATS],
        description:
          '`ndjson` (default, one JSON record per line), `csv` (RFC 4180, a header row, nested fields as dotted columns such as `confidence.agreement`, arrays as JSON, text that would start a spreadsheet formula prefixed with a single quote) or `parquet` (the same columns typed: integers INT32, `ts`/`start_time` UTC timestamps, `date` DATE).',
      }),
    ),
    from: Type.Optional(Bound('Inclusive lower bound:')),
    to: Type.Optional(Bound('Exclusive upper bound:')),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 120,
        description: 'Resume after this record: the last event id (`evt_…`), play (`<competition_id>:<seq>`) or competition id received.',
      }),
    ),
  },
  closed,
);
export type ExportQuery = Static<typeof ExportQuery>;

/** `GET /v1/stream`: comma lists form a union; `since` resumes after an event id. */
export const StreamQuery = Type.Object(
  {
    sport: Type.Optional(Type.String({ description: 'Comma list of sports.' })),
    league: Type.Optional(Type.String({ description: 'Comma list of leagues.' })),
    game: Type.Optional(Type.String({ description: 'Comma list of game ids.' })),
    tier: Type.Optional(Type.Union(TIERS.map((t) => Type.Literal(t)), { description: 'Default: both tiers.' })),
    types: Type.Optional(TypesParam),
    since: Type.Optional(Type.String({ description: 'Resume after this event id (evt_…): an event of the last 24 h, else nothing is replayed (`recovered: false`); an id past the newest event is 400 `invalid_parameter`.' })),
    delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300, description: 'Hold every event until this many seconds after its ts (heartbeats are not held).' })),
    min_probability: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Leave out events whose confidence.probability is below this (official events carry 1); a score_retracted of an event that was sent is always sent.' }),
    ),
    token: Type.Optional(Type.String({ description: 'A stream token (sst_…, POST /v1/stream/tokens): how a browser page authenticates.' })),
    access_token: Type.Optional(Type.String({ description: 'The API key, for clients that cannot set Authorization and are not public pages.' })),
  },
  closed,
);
export type StreamQuery = Static<typeof StreamQuery>;
