/**
 * A live game's current score in a tier, from its events (README.md beside this file, "Live games").
 */

export interface ScoreEventFact {
  id: string;
  type: string;
  tier: string;
  /** The team's code, as events carry it. */
  team: string;
  points: number;
  provisional_id: string | null;
  retracted_id: string | null;
}

/**
 * Points by team code: `confirmed` adds the confirmed score events that no correction retracted;
 * `provisional` adds besides the provisional ones still open (neither confirmed by a later event
 * naming them nor retracted).
 */
export function liveScore(events: readonly ScoreEventFact[], tier: 'confirmed' | 'provisional'): Map<string, number> {
  const closed = new Set<string>();
  for (const e of events) {
    if (e.provisional_id) closed.add(e.provisional_id);
    if (e.retracted_id) closed.add(e.retracted_id);
  }
  const out = new Map<string, number>();
  for (const e of events) {
    if (e.type !== 'score' || closed.has(e.id)) continue;
    const counts = e.tier === 'confirmed' || (tier === 'provisional' && e.tier === 'provisional');
    if (counts) out.set(e.team, (out.get(e.team) ?? 0) + e.points);
  }
  return out;
}
