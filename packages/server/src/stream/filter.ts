import type { StoredEvent } from '../store/events/events.js';

/**
 * What one socket wants. Sports, leagues and games add up (a union). A socket opened without any
 * receives everything the key may see (`everything`) until it first subscribes to something; from
 * then on exactly its subscriptions, so unsubscribing the last one leaves it with none instead of
 * silently widening it to everything. The key's own scope is always applied on top.
 */
export interface StreamFilter {
  everything: boolean;
  sports: Set<string>;
  leagues: Set<string>;
  games: Set<string>;
  tier: 'provisional' | 'confirmed' | null;
  /** The event types wanted (`types`), null for all (docs/schedule.md). */
  types: readonly string[] | null;
  scopeSports: readonly string[] | null;
  scopeLeagues: readonly string[] | null;
  /** A stream token's games (docs/stream.md "Stream tokens"); null: not limited to games. */
  scopeGames: readonly string[] | null;
  /** The socket's key: a sandbox replay's events reach their owner key only (docs/replays.md). */
  viewerKeyId: string;
  /** `min_probability`: events whose probability is below it are not sent (0: all). */
  minProbability: number;
  /**
   * The lowest `min_probability` the socket has had: a retraction passes when its probability (the
   * withdrawn event's) reaches it, so one of an event sent before the threshold rose still goes out.
   */
  retractionFloor: number;
}

/**
 * Whether an event's `confidence.probability` reaches `min`; `floor` (≤ min) for a retraction, whose
 * probability is the withdrawn event's (docs/stream.md "min_probability"). Status events always pass.
 */
export function probableEnough(s: StoredEvent, min: number, floor = min): boolean {
  const e = s.event;
  if (e.type === 'status' || min <= 0) return true;
  return e.confidence.probability >= (e.type === 'score_retracted' ? floor : min);
}

export function matches(f: StreamFilter, s: StoredEvent): boolean {
  const e = s.event;
  if (s.ownerKeyId && s.ownerKeyId !== f.viewerKeyId) return false;
  if (f.tier && e.tier !== f.tier) return false;
  if (f.types && !f.types.includes(e.type)) return false;
  if (!probableEnough(s, f.minProbability, f.retractionFloor)) return false;
  if (f.scopeSports && !f.scopeSports.includes(s.sport)) return false;
  if (f.scopeLeagues && !f.scopeLeagues.includes(s.league)) return false;
  if (f.scopeGames && !f.scopeGames.includes(e.game_id)) return false;
  if (f.everything) return true;
  return f.sports.has(s.sport) || f.leagues.has(s.league) || f.games.has(e.game_id);
}
