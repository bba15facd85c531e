import { ListOf, PlayerSeasonStats, PlayerStatsQuery } from '@svc/schema';
import { notFound } from '../../domain/errors.js';
import { requireViewProduct } from '../../standings/service.js';
import { PlayerIdParams, errorResponses } from '../common.js';
import { principal, type RoutePlugin, type ViewDeps } from '../types.js';

export const getPlayerStats = {
  tags: ['standings'],
  summary: 'A player’s totals, one per season the player scored in',
  params: PlayerIdParams,
  querystring: PlayerStatsQuery,
  response: { 200: ListOf(PlayerSeasonStats), ...errorResponses },
};

/** GET /v1/players/:id/stats (docs/standings.md). */
export const playerStatsRoutes: RoutePlugin<ViewDeps> = async (app, { views }) => {
  app.get('/players/:id/stats', { schema: getPlayerStats, config: { cache: true, etag: true } }, async (request) => {
    const p = principal(request);
    requireViewProduct(p);
    const page = await views.playerStats(p, request.params.id, request.query);
    if (!page) throw notFound('player', request.params.id, 'id');
    return page;
  });
};
