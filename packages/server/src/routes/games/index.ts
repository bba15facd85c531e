import { TEAM_SPORTS, gameId, parseGameId, type Competition, type Game } from '@svc/schema';
import { eligibility, requireEventAccess } from '../../domain/access.js';
import { notFound } from '../../domain/errors.js';
import { sendSerialized } from '../../http/serialized.js';
import { parseEventTypes } from '../../domain/event-types.js';
import { requireScope, visibleTo, type Principal } from '../../domain/scopes.js';
import { resolveCompetitionQuery } from '../competitions/filters.js';
import { getGame, listGameEvents, listGames } from '../competitions/schema.js';
import type { CompetitionRepo } from '../../store/reference/competitions.js';
import { principal, type CompetitionDeps, type RoutePlugin } from '../types.js';

export function gameOf(c: Competition & { n: number }, today: string): Game {
  return {
    id: gameId(c),
    competition_id: c.id,
    sport: c.sport,
    league: c.league,
    season: c.season,
    date: c.date,
    start_time: c.start_time,
    status: c.status,
    original_start_time: c.original_start_time,
    status_reason: c.status_reason,
    venue: c.venue,
    competitors: c.competitors,
    eligibility: eligibility(c, today),
    synthetic: c.synthetic,
  };
}

/**
 * `<sport>_<n>` of a team sport that the key may see, else undefined (a 404 for the caller):
 * another key's sandbox replay does not exist for it (docs/replays.md).
 */
export async function findGame(competitions: CompetitionRepo, id: string, p: Principal) {
  const game = parseGameId(id);
  if (!game || !TEAM_SPORTS.some((t) => t === game.sport)) return undefined;
  const c = await competitions.getByGame(game.sport, game.n);
  return c && visibleTo(c.ownerKeyId, p.keyId) ? c : undefined;
}

export const gameRoutes: RoutePlugin<CompetitionDeps> = async (app, deps) => {
  const { competitions, today } = deps;
  app.get('/games', { schema: listGames, config: { cache: true } }, async (request) => {
    const { limit = 100, cursor, ...q } = request.query;
    const { scope, filter } = await resolveCompetitionQuery(deps, principal(request), q);
    filter.sports = q.sport ? [q.sport] : TEAM_SPORTS;
    const page = await competitions.list(scope, filter, { limit, cursor });
    const day = today();
    return { data: page.data.map((c) => gameOf(c, day)), next_cursor: page.next_cursor };
  });

  app.get('/games/:id', { schema: getGame, config: { cache: true } }, async (request) => {
    const c = await findGame(competitions, request.params.id, principal(request));
    if (!c) throw notFound('game', request.params.id, 'id');
    requireScope(principal(request), c.sport, c.league);
    return { data: gameOf(c, today()) };
  });

  app.get('/games/:id/events', { schema: listGameEvents, config: { cache: true } }, async (request, reply) => {
    const c = await findGame(competitions, request.params.id, principal(request));
    if (!c) throw notFound('game', request.params.id, 'id');
    requireEventAccess(principal(request), c, today());
    const { limit = 100, cursor, types } = request.query;
    // The stored JSON of each event, the export's bytes (docs/decisions.md "Export").
    return sendSerialized(reply, await competitions.confirmedEventsJson(gameId(c), { limit, cursor }, parseEventTypes(types)));
  });
};
