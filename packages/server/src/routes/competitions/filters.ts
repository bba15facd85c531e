import { resolveDate } from '../../domain/access.js';
import { checkZone, zoneDay } from '../../domain/zones.js';
import { requireScope, type Principal, type ScopeFilter } from '../../domain/scopes.js';
import type { CompetitionDeps } from '../types.js';
import type { CompetitionFilter } from '../../store/reference/competitions.js';

export interface CompetitionQuery {
  sport?: string;
  league?: string;
  season?: string;
  date?: string;
  tz?: string;
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
  // With `tz` the day is the zone's, matched on start_time (docs/decisions.md "Time zones");
  // without it, the competition's `date` as before. `tz` alone is checked and changes nothing.
  const zone = q.tz !== undefined ? checkZone(q.tz) : undefined;
  if (q.date !== undefined && zone !== undefined) filter.zoneDay = zoneDay(q.date === 'today' ? 'today' : resolveDate(q.date, s.today()), zone, s.now());
  else if (q.date !== undefined) filter.date = resolveDate(q.date, s.today());
  if (q.season !== undefined) filter.seasonIds = await s.reference.resolveSeasonIds(q.season, q.league);
  if (q.team !== undefined) {
    const t = await s.reference.team(q.team);
    if (t) requireScope(p, t.sport, t.league, 'team');
  }
  return { scope, filter };
}
