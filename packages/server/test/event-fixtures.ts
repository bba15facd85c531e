import type { NewEvent } from '../src/store/events/events.js';

/** What a confirmed event needs to know of its game: a row of GET /v1/games and its competition's season. */
export interface GameOfEvent {
  id: string;
  competition_id: string;
  league: string;
  season_id: string;
  /** The scoring team's code. */
  team: string;
}

/** A crowd-confirmed goal, as the consensus writes one: what webhook tests append to get deliveries. */
export function confirmedGoal(game: GameOfEvent, ts: string, over: Partial<NewEvent> = {}): NewEvent {
  return {
    type: 'score',
    tier: 'confirmed',
    game_id: game.id,
    competition_id: game.competition_id,
    sport: 'soccer',
    league: game.league,
    season_id: game.season_id,
    team: game.team,
    event_type: 'goal',
    points: 1,
    clock: "12'",
    ts,
    agreement: 1,
    reporters: 3,
    latency_ms: 900, probability: 1,
    provisional_id: null,
    retracted_id: null,
    ...over,
  };
}
