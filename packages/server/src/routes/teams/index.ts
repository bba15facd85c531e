import { notFound } from '../../domain/errors.js';
import { requireScope } from '../../domain/scopes.js';
import { principal, type ReferenceDeps, type RoutePlugin } from '../types.js';
import { getRoster, getTeam, listTeams } from './schema.js';

export const teamRoutes: RoutePlugin<ReferenceDeps> = async (app, { reference, leagues }) => {
  app.get('/teams', { schema: listTeams, config: { cache: true } }, async (request) => {
    const { sport, league, limit = 100, cursor } = request.query;
    const scope = await leagues.scope(principal(request), sport, league);
    return reference.listTeams(scope, { limit, cursor });
  });

  app.get('/teams/:id', { schema: getTeam, config: { cache: true } }, async (request) => {
    const team = await reference.team(request.params.id);
    if (!team) throw notFound('team', request.params.id, 'id');
    requireScope(principal(request), team.sport, team.league);
    return { data: team };
  });

  app.get('/teams/:id/roster', { schema: getRoster, config: { cache: true } }, async (request) => {
    const team = await reference.team(request.params.id);
    if (!team) throw notFound('team', request.params.id, 'id');
    requireScope(principal(request), team.sport, team.league);
    const { season, limit = 100, cursor } = request.query;
    let seasonId: string | undefined;
    if (season !== undefined) {
      const ids = await reference.resolveSeasonIds(season, team.league);
      seasonId = ids[0] ?? season;
    }
    return reference.roster(team.id, seasonId, { limit, cursor });
  });
};
