import { resolveDate } from '../../domain/access.js';
import { requireScope, type Principal, type ScopeFilter } from '../../domain/scopes.js';
import type { CompetitionDeps } from '../types.js';
import type { CompetitionFilter } from '../../store/competitions.js';

export interface CompetitionQuery {
  sport?: string;
  league?: string;
  season?: string;
  date?: string;
  team?: string;
  player?: string;
  status?: string;
}

/** Validates and resolves the shared competition filters once for /competitions and /games. */
export async function resolveCompetitionQuery(
  s: CompetitionDeps,
  p: Principal,
  q: CompetitionQuery,
): Promise<{ scope: ScopeFilter; filter: CompetitionFilter }> {
  const scope = await s.leagues.scope(p, q.sport, q.league);
  const filter: CompetitionFilter = { league: q.league, status: q.status, team: q.team, player: q.player };
  if (q.date !== undefined) filter.date = resolveDate(q.date, s.today());
  if (q.season !== undefined) filter.seasonIds = await s.reference.resolveSeasonIds(q.season, q.league);
  if (q.team !== undefined) {
    const t = await s.reference.team(q.team);
    if (t) requireScope(p, t.sport, t.league, 'team');
  }
  return { scope, filter };
}
