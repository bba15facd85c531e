import { notFound } from '../../domain/errors.js';
import { requireScope } from '../../domain/scopes.js';
import { principal, type ReferenceDeps, type RoutePlugin } from '../types.js';
import { getPlayer, listPlayers } from './schema.js';

export const playerRoutes: RoutePlugin<ReferenceDeps> = async (app, { reference, leagues }) => {
  app.get('/players', { schema: listPlayers, config: { cache: true } }, async (request) => {
    const { sport, league, team, season, search, limit = 100, cursor } = request.query;
    const p = principal(request);
    const scope = await leagues.scope(p, sport, league);
    if (team !== undefined) {
      const t = await reference.team(team);
      if (t) requireScope(p, t.sport, t.league, 'team');
    }
    let seasonId: string | undefined;
    if (season !== undefined) seasonId = (await reference.resolveSeasonIds(season, league))[0] ?? season;
    return reference.listPlayers(scope, { team, season: seasonId, search }, { limit, cursor });
  });

  app.get('/players/:id', { schema: getPlayer, config: { cache: true } }, async (request) => {
    const player = await reference.player(request.params.id);
    if (!player) throw notFound('player', request.params.id, 'id');
    requireScope(principal(request), player.sport, player.league);
    return { data: player };
  });
};
