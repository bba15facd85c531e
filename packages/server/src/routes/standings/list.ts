import { requireTierProduct, requireViewProduct } from '../../standings/service.js';
import { principal, type App, type ViewDeps } from '../types.js';
import { listStandings } from './schema.js';

export const listStandingsRoute = (app: App, { views }: ViewDeps): void => {
  app.get('/standings', { schema: listStandings, config: { cache: true, etag: true } }, async (request) => {
    const p = principal(request);
    requireViewProduct(p);
    requireTierProduct(p, request.query.tier);
    return views.standings(p, request.query);
  });
};
