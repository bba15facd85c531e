import { notFound } from '../../domain/errors.js';
import { requireScope } from '../../domain/scopes.js';
import { principal, type RoutePlugin } from '../types.js';
import { getPlayer, listPlayers } from './schema.js';

export const playerRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/players', { schema: listPlayers }, async (request) => {
    const { sport, league, team, season, search, limit = 100, cursor } = request.query;
    const p = principal(request);
    const scope = await s.scope(p, sport, league);
    if (team !== undefined) {
      const t = await s.reference.team(team);
      if (t) requireScope(p, t.sport, t.league, 'team');
    }
    let seasonId: string | undefined;
    if (season !== undefined) seasonId = (await s.reference.resolveSeasonIds(season, league))[0] ?? season;
    return s.reference.listPlayers(scope, { team, season: seasonId, search }, { limit, cursor });
  });

  app.get('/v1/players/:id', { schema: getPlayer }, async (request) => {
    const player = await s.reference.player(request.params.id);
    if (!player) throw notFound('player', request.params.id, 'id');
    requireScope(principal(request), player.sport, player.league);
    return { data: player };
  });
};
