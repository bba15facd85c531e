import type { Leader } from '@svc/schema';
import { OWN_GOAL, playerPoints, playerSide, typeKey, type PlayFact } from './boxscore.js';

/**
 * A season's player totals and leaders: pure rules, no I/O (README.md beside this file).
 */

/** A play with its game's competitors, so own goals find the scorer's side. */
export interface SeasonPlay extends PlayFact {
  competitors: readonly { entity_id: string }[];
  /** Sort key of the play in the season (game date, game id, play seq): "latest" means highest. */
  order: string;
}

export interface PlayerTotal {
  player_id: string;
  competitor_id: string;
  points: number;
  by_type: Record<string, number>;
}

/** Totals per player over a season's plays (plays without a player count for no one). */
export function playerTotals(plays: readonly SeasonPlay[]): Map<string, PlayerTotal> {
  const out = new Map<string, PlayerTotal & { at: string }>();
  for (const p of [...plays].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0))) {
    if (!p.player_id) continue;
    let t = out.get(p.player_id);
    if (!t) out.set(p.player_id, (t = { player_id: p.player_id, competitor_id: playerSide(p, p.competitors), points: 0, by_type: {}, at: p.order }));
    if (p.event_type !== OWN_GOAL) t.competitor_id = p.competitor_id;
    t.points += playerPoints(p);
    const k = typeKey(p);
    t.by_type[k] = (t.by_type[k] ?? 0) + 1;
  }
  return new Map([...out].map(([id, { at: _at, ...t }]) => [id, t]));
}

/** The stat a sport's leaders rank by when none is asked for. */
export const DEFAULT_STAT: Record<string, string> = { soccer: 'goals', basketball: 'points' };

/**
 * A total's value of `stat`: `goals` (soccer) counts goals and penalty goals, `points` the
 * points for the player's side, any other name the plays of that event type.
 */
export function statValue(t: PlayerTotal, stat: string): number {
  if (stat === 'goals') return (t.by_type.goal ?? 0) + (t.by_type.penalty_goal ?? 0);
  if (stat === 'points') return t.points;
  return t.by_type[stat] ?? 0;
}

/** Players with a value above 0, value descending then player id; ties share a rank (1, 2, 2, 4). */
export function leaders(totals: Iterable<PlayerTotal>, stat: string): Leader[] {
  const list = [...totals]
    .map((t) => ({ player_id: t.player_id, competitor_id: t.competitor_id, value: statValue(t, stat) }))
    .filter((l) => l.value > 0)
    .sort((a, b) => b.value - a.value || (a.player_id < b.player_id ? -1 : a.player_id > b.player_id ? 1 : 0));
  let rank = 0;
  return list.map((l, i) => {
    if (i === 0 || list[i - 1].value !== l.value) rank = i + 1;
    return { rank, ...l };
  });
}
