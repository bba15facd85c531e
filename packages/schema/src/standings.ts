/**
 * Views computed from the games and their official plays: standings, a game's box score, a
 * season's leaders and a player's totals (docs/standings.md). The rules behind them live in the
 * server's `domain/standings/` with their sources.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, LeagueParam, Limit, SeasonParam } from './params.js';

const closed = { additionalProperties: false } as const;

export const StandingsRow = Type.Object(
  {
    rank: Type.Integer({ minimum: 1, description: 'Position in the table, from 1.' }),
    entity_id: Type.String({ description: 'The team (or player) this row is about.' }),
    played: Type.Integer(),
    won: Type.Integer(),
    drawn: Type.Optional(Type.Integer({ description: 'Soccer only.' })),
    lost: Type.Integer(),
    scored: Type.Integer({ description: 'Goals or points scored.' }),
    conceded: Type.Integer(),
    diff: Type.Integer({ description: '`scored` − `conceded`.' }),
    points: Type.Optional(Type.Integer({ description: 'Soccer only: 3 a win, 1 a draw.' })),
    pct: Type.Optional(Type.Number({ description: 'Basketball only: won / played, 3 decimals (0 before the first game).' })),
    games_behind: Type.Optional(Type.Number({ description: 'Basketball only: ((leader won − won) + (lost − leader lost)) / 2.' })),
    live: Type.Boolean({ description: 'A game of this competitor is in progress and counted at its current score.' }),
  },
  closed,
);
export type StandingsRow = Static<typeof StandingsRow>;

export const StandingsTable = Type.Object(
  {
    group: Type.Union([Type.String(), Type.Null()], { description: 'The tournament group (`Group A`); null for a season without groups.' }),
    rows: Type.Array(StandingsRow),
  },
  closed,
);
export type StandingsTable = Static<typeof StandingsTable>;

export const Standings = Type.Object(
  {
    data: Type.Array(StandingsTable),
    as_of: Type.String({ description: 'ISO 8601: the newest play or event the tables count.' }),
  },
  closed,
);
export type Standings = Static<typeof Standings>;

export const BoxScorePeriod = Type.Object(
  {
    unit: Type.String({ description: '`half`, `extra_time`, `quarter`, `overtime`, …' }),
    num: Type.Integer(),
    label: Type.String(),
    points: Type.Integer({ description: 'What this competitor scored in the period (0 when nothing).' }),
  },
  closed,
);
export type BoxScorePeriod = Static<typeof BoxScorePeriod>;

export const BoxScoreCompetitor = Type.Object(
  {
    entity_id: Type.String(),
    role: Type.String(),
    score: Type.Integer({ description: 'The sum of `periods` (a shoot-out is not part of it).' }),
    periods: Type.Array(BoxScorePeriod),
    shootout: Type.Optional(Type.Integer({ description: 'Kicks scored in a penalty shoot-out, when there was one.' })),
  },
  closed,
);
export type BoxScoreCompetitor = Static<typeof BoxScoreCompetitor>;

export const BoxScorePlayer = Type.Object(
  {
    player_id: Type.String(),
    competitor_id: Type.String({ description: 'The player’s own side (for an own goal: not the side it counted for).' }),
    points: Type.Integer({ description: 'Points (goals) for the player’s side; own goals and shoot-out kicks left out.' }),
    by_type: Type.Record(Type.String(), Type.Integer(), { description: 'Plays by `event_type` (`goal`, `penalty_goal`, `own_goal`, `three_pointer`, …).' }),
  },
  closed,
);
export type BoxScorePlayer = Static<typeof BoxScorePlayer>;

export const BoxScore = Type.Object(
  {
    competition_id: Type.String(),
    sport: Type.String(),
    status: Type.String(),
    competitors: Type.Array(BoxScoreCompetitor),
    players: Type.Array(BoxScorePlayer),
    winner: Type.Union([Type.String(), Type.Null()], { description: 'The winner’s entity id once the game is final; null for a draw or before the end.' }),
    as_of: Type.String({ description: 'ISO 8601: the time of the newest play counted.' }),
  },
  closed,
);
export type BoxScore = Static<typeof BoxScore>;

export const Leader = Type.Object(
  {
    rank: Type.Integer({ minimum: 1, description: 'Ties share a rank (1, 2, 2, 4).' }),
    player_id: Type.String(),
    competitor_id: Type.String({ description: 'The team the player scored for last in the season.' }),
    value: Type.Integer(),
  },
  closed,
);
export type Leader = Static<typeof Leader>;

export const PlayerSeasonStats = Type.Object(
  {
    league: Type.String(),
    season: Type.String({ description: 'Season label.' }),
    competitor_id: Type.String({ description: 'The team the player scored for last in the season.' }),
    points: Type.Integer({ description: 'Points (goals) for the player’s side; own goals and shoot-out kicks left out.' }),
    by_type: Type.Record(Type.String(), Type.Integer()),
  },
  closed,
);
export type PlayerSeasonStats = Static<typeof PlayerSeasonStats>;

export const TierParam = Type.Union([Type.Literal('confirmed'), Type.Literal('provisional')], {
  description: 'Which events of live games count: `confirmed` (default) or `provisional` (confirmed plus those still waiting; needs the `live` product, else 403 `product_not_in_plan`).',
});
export const BooleanParam = Type.Union([Type.Literal('true'), Type.Literal('false')]);
export const StatParam = Type.String({ pattern: '^[a-z_]{1,32}$', description: 'Soccer: `goals` (default: goals and penalty goals) or an event type; basketball: `points` (default) or an event type.' });

export const StandingsQuery = Type.Object(
  {
    league: LeagueParam,
    season: Type.Optional(SeasonParam),
    tier: Type.Optional(TierParam),
    live: Type.Optional(BooleanParam),
  },
  closed,
);
export type StandingsQuery = Static<typeof StandingsQuery>;

export const LeadersQuery = Type.Object(
  {
    league: LeagueParam,
    season: Type.Optional(SeasonParam),
    stat: Type.Optional(StatParam),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  closed,
);
export type LeadersQuery = Static<typeof LeadersQuery>;

export const PlayerStatsQuery = Type.Object(
  { season: Type.Optional(SeasonParam), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  closed,
);
export type PlayerStatsQuery = Static<typeof PlayerStatsQuery>;
