import { crowdPeriod, teamCode } from '../corrections.js';
import type { PlayFact } from './boxscore.js';

/** A confirmed crowd score as the box score of the crowd's own game reads it. */
export interface CrowdScoreFact {
  team: string;
  points: number;
  clock: string | null;
  ts: string;
}

/**
 * The crowd's own game (no official source covers it, docs/corrections.md) has no plays: its box
 * score is made of its confirmed crowd scores not withdrawn, each placed in a period by its clock
 * (`crowdPeriod`), with no player. A score of a team outside the game is left out.
 */
export function crowdPlays(sport: string, competitors: readonly { entity_id: string; role: string }[], scores: readonly CrowdScoreFact[]): PlayFact[] {
  const state: Record<string, number> = Object.fromEntries(competitors.map((c) => [c.role, 0]));
  const out: PlayFact[] = [];
  let period: PlayFact['period'] | null = null;
  for (const s of scores) {
    const who = competitors.find((c) => teamCode(c.entity_id) === s.team);
    if (!who) continue;
    period = crowdPeriod(sport, s.clock, period);
    state[who.role] = (state[who.role] ?? 0) + s.points;
    out.push({ period, competitor_id: who.entity_id, player_id: null, event_type: 'score', points: s.points, state: { ...state }, ts: s.ts });
  }
  return out;
}
