import { principal, type RoutePlugin } from '../types.js';
import { listSeasons } from './schema.js';

export const seasonRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/seasons', { schema: listSeasons }, async (request) => {
    const { league, sport, limit = 100, cursor } = request.query;
    const scope = await s.scope(principal(request), sport, league);
    return s.reference.listSeasons(scope, { limit, cursor });
  });
};
