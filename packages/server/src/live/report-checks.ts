import type { ReportInput } from '@svc/schema';
import { isoDate } from '../domain/clock.js';
import { conflict, invalid } from '../domain/errors.js';
import { NOT_PLAYED } from '../domain/schedule/lifecycle.js';
import { requireScope, visibleTo, type Principal } from '../domain/scopes.js';
import type { GameInfo } from './games.js';
import { pointsAllowed } from './sport-rules.js';

/**
 * How far a report's `observed_at` may be from the arrival: a moment of today's game (games run
 * for hours, not days) seen by a device whose clock may run a little ahead. Outside it the report
 * is refused: a time in 2000 or 2099 is a broken client, not an observation. Inside it, a time
 * ahead of the service's clock counts as the arrival (README "Reports").
 */
export const OBSERVED_AT_WINDOW = { pastMs: 6 * 3_600_000, futureMs: 5 * 60_000 } as const;

/**
 * Whether `p` may report `r` on `game` (undefined: no such game) at `now`; throws the documented
 * error naming the field (`at` prefixes it with the report's place in a batch).
 */
export function checkReport(p: Principal, r: ReportInput, game: GameInfo | undefined, now: number, at: (field: string) => string): asserts game is GameInfo {
  // Another key's sandbox replay does not exist for this key (docs/replays.md).
  if (!game || !visibleTo(game.ownerKeyId, p.keyId)) throw invalid('unknown_game', `No game '${r.game_id}'.`, at('game_id'));
  requireScope(p, game.sport, game.league, at('game_id'));
  if (game.status === 'final') throw conflict('game_final', `Game '${r.game_id}' is final; it takes no more reports.`, at('game_id'));
  // A postponed or cancelled game is not being played (docs/schedule.md).
  if (NOT_PLAYED.includes(game.status)) {
    throw conflict('game_not_live', `Game '${r.game_id}' is ${game.status}; it takes no reports.`, at('game_id'));
  }
  if (game.date !== isoDate(now) && game.status !== 'live' && game.status !== 'suspended') {
    throw conflict('game_not_live', `Game '${r.game_id}' is on ${game.date}; reports are taken on game day.`, at('game_id'));
  }
  if (!game.teams.has(r.team)) throw invalid('team_not_in_game', `Team '${r.team}' does not play in ${r.game_id}.`, at('team'));
  if (!pointsAllowed(game.sport, r.points)) {
    throw invalid('invalid_points', `${r.points} points cannot be scored at once in ${game.sport}.`, at('points'));
  }
  if (r.observed_at !== undefined) {
    const observed = Date.parse(r.observed_at);
    if (Number.isNaN(observed)) throw invalid('invalid_field', "'observed_at' must be an ISO 8601 date-time.", at('observed_at'));
    if (observed < now - OBSERVED_AT_WINDOW.pastMs || observed > now + OBSERVED_AT_WINDOW.futureMs) {
      throw invalid('invalid_field', "'observed_at' must be within the last 6 hours and at most 5 minutes ahead of the service's clock.", at('observed_at'));
    }
  }
}
