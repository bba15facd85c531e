import { SvcError } from '../domain/errors.js';
import type { GameDirectory } from '../live/games.js';
import type { OfficialFeed } from '../live/official.js';

/**
 * Ends a replay's game with a `final` play unless it is final already, so a cancelled replay's
 * game does not stay live (docs/replays.md). A driver that posted the final play first wins.
 */
export async function closeReplayGame(games: GameDirectory, official: OfficialFeed, competitionId: string, why: string): Promise<void> {
  const game = await games.byCompetitionId(competitionId);
  const home = game && [...game.teams.values()].find((t) => t.role === 'home');
  if (!game || !home || game.status === 'final') return;
  try {
    await official.record(game, [{ period: { unit: 'fulltime', num: 1, label: `Full time (${why})` }, competitor_id: home.entityId, event_type: 'final', points: 0, source: 'replay:cancelled' }], false);
  } catch (err) {
    if (!(err instanceof SvcError && err.code === 'competition_final')) throw err;
  }
}
