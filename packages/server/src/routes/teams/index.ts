import { notFound } from '../../domain/errors.js';
import { requireScope } from '../../domain/scopes.js';
import { principal, type RoutePlugin } from '../types.js';
import { getRoster, getTeam, listTeams } from './schema.js';

export const teamRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/teams', { schema: listTeams }, async (request) => {
    const { sport, league, limit = 100, cursor } = request.query;
    const scope = await s.scope(principal(request), sport, league);
    return s.reference.listTeams(scope, { limit, cursor });
  });

  app.get('/v1/teams/:id', { schema: getTeam }, async (request) => {
    const team = await s.reference.team(request.params.id);
    if (!team) throw notFound('team', request.params.id, 'id');
    requireScope(principal(request), team.sport, team.league);
    return { data: team };
  });

  app.get('/v1/teams/:id/roster', { schema: getRoster }, async (request) => {
    const team = await s.reference.team(request.params.id);
    if (!team) throw notFound('team', request.params.id, 'id');
    requireScope(principal(request), team.sport, team.league);
    const { season, limit = 100, cursor } = request.query;
    let seasonId: string | undefined;
    if (season !== undefined) {
      const ids = await s.reference.resolveSeasonIds(season, team.league);
      seasonId = ids[0] ?? season;
    }
    return s.reference.roster(team.id, seasonId, { limit, cursor });
  });
};
