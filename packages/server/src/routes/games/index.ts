import { TEAM_SPORTS, gameId, parseGameId, type Competition, type Game } from '@svc/schema';
import { eligibility, requireEventAccess } from '../../domain/access.js';
import { notFound } from '../../domain/errors.js';
import { requireScope } from '../../domain/scopes.js';
import type { Services } from '../../services.js';
import { resolveCompetitionQuery } from '../competitions/filters.js';
import { getGame, listGameEvents, listGames } from '../competitions/schema.js';
import { principal, type RoutePlugin } from '../types.js';

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
    venue: c.venue,
    competitors: c.competitors,
    eligibility: eligibility(c, today),
    synthetic: c.synthetic,
  };
}

/** `<sport>_<n>` of a team sport, else undefined (a 404 for the caller). */
export async function findGame(s: Services, id: string) {
  const game = parseGameId(id);
  if (!game || !TEAM_SPORTS.some((t) => t === game.sport)) return undefined;
  return s.competitions.getByGame(game.sport, game.n);
}

export const gameRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/games', { schema: listGames }, async (request) => {
    const { limit = 100, cursor, ...q } = request.query;
    const { scope, filter } = await resolveCompetitionQuery(s, principal(request), q);
    filter.sports = q.sport ? [q.sport] : TEAM_SPORTS;
    const page = await s.competitions.list(scope, filter, { limit, cursor });
    const today = s.today();
    return { data: page.data.map((c) => gameOf(c, today)), next_cursor: page.next_cursor };
  });

  app.get('/v1/games/:id', { schema: getGame }, async (request) => {
    const c = await findGame(s, request.params.id);
    if (!c) throw notFound('game', request.params.id, 'id');
    requireScope(principal(request), c.sport, c.league);
    return { data: gameOf(c, s.today()) };
  });

  app.get('/v1/games/:id/events', { schema: listGameEvents }, async (request) => {
    const c = await findGame(s, request.params.id);
    if (!c) throw notFound('game', request.params.id, 'id');
    requireEventAccess(principal(request), c, s.today());
    const { limit = 100, cursor } = request.query;
    return s.competitions.confirmedEvents(gameId(c), { limit, cursor });
  });
};
