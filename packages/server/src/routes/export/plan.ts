import type { Static } from '@sinclair/typebox';
import type { Principal, ScopeFilter } from '../../domain/scopes.js';
import { invalid } from '../../domain/errors.js';
import { parseEventTypes } from '../../domain/event-types.js';
import { badAfter, checkRange, parseAfter, parseBound, type After, type Entity } from '../../export/params.js';
import type { ExportRepo, ExportSlice } from '../../store/events/export.js';
import type { PlayStart } from '../../export/sources.js';
import type { CompetitionDeps } from '../types.js';
import type { ExportFormat, ExportQuery } from '@svc/schema';
import { FORMATS } from '../../export/formats.js';

/** Everything an export needs, validated and resolved before the first byte is sent. */
export interface ExportPlan {
  entity: Entity;
  format: ExportFormat;
  scope: ScopeFilter;
  slice: ExportSlice;
  /** Keyset start position: after this event seq, play or competition. */
  afterSeq: number;
  afterPlay?: PlayStart;
  afterCompetition?: { date: string; id: string };
  filename: string;
}

/**
 * Validates the query (400s name the parameter), checks the key's sport/league scope (403) and
 * turns `season` and `after` into database positions. Runs before streaming starts, so every
 * refusal is an ordinary JSON error response.
 */
export async function planExport(s: CompetitionDeps, repo: ExportRepo, p: Principal, q: Static<typeof ExportQuery>): Promise<ExportPlan> {
  const entity: Entity = q.entity ?? 'events';
  const format: ExportFormat = q.format ?? 'ndjson';
  const from = q.from !== undefined ? parseBound(q.from, 'from') : undefined;
  const to = q.to !== undefined ? parseBound(q.to, 'to') : undefined;
  checkRange(from, to);
  const after = q.after !== undefined ? parseAfter(q.after, entity) : undefined;

  // 400 for an unknown league, 403 sport_not_in_scope outside the key's sports/leagues.
  const scope = await s.leagues.scope(p, undefined, q.league);
  const seasonIds = await s.reference.resolveSeasonIds(q.season, q.league);
  if (seasonIds.length === 0) {
    throw invalid('invalid_parameter', `League '${q.league}' has no season '${q.season}'; GET /v1/seasons?league=${q.league} lists them.`, 'season');
  }
  const slice: ExportSlice = {
    league: q.league,
    seasonIds,
    today: s.today(),
    fromTs: from?.ts,
    toTs: to?.ts,
    fromDate: from?.ceilDate,
    toDate: to?.ceilDate,
  };
  if (q.types !== undefined) {
    if (entity !== 'events') throw invalid('invalid_parameter', "'types' filters events; it is taken with entity=events only.", 'types');
    slice.types = parseEventTypes(q.types) ?? undefined;
  }
  const label = q.season.startsWith(`${q.league}_`) ? q.season.slice(q.league.length + 1) : q.season;
  const plan: ExportPlan = { entity, format, scope, slice, afterSeq: 0, filename: `${q.league}_${label}_${entity}.${FORMATS[format].extension}` };
  if (after) await resolveAfter(plan, repo, after);
  return plan;
}

/** An `after` naming a competition outside this export could only be a mistake: 400, not an empty file. */
async function resolveAfter(plan: ExportPlan, repo: ExportRepo, after: After): Promise<void> {
  if (after.entity === 'events') {
    plan.afterSeq = after.seq;
    return;
  }
  const c = await repo.competitionPosition(after.competitionId);
  if (!c || c.league !== plan.slice.league || !plan.slice.seasonIds.includes(c.season_id)) throw badAfter(after.entity);
  if (after.entity === 'plays') plan.afterPlay = { competition: c, seq: after.seq };
  else plan.afterCompetition = { date: c.date, id: after.competitionId };
}
