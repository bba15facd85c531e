import { principal, type ReferenceDeps, type RoutePlugin } from '../types.js';
import { listSeasons } from './schema.js';

export const seasonRoutes: RoutePlugin<ReferenceDeps> = async (app, { reference, leagues }) => {
  app.get('/seasons', { schema: listSeasons, config: { cache: true } }, async (request) => {
    const { league, sport, limit = 100, cursor } = request.query;
    const scope = await leagues.scope(principal(request), sport, league);
    return reference.listSeasons(scope, { limit, cursor });
  });
};
