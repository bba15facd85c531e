import { requireViewProduct } from '../../standings/service.js';
import { principal, type App, type ViewDeps } from '../types.js';
import { listLeaders } from './schema.js';

export const listLeadersRoute = (app: App, { views }: ViewDeps): void => {
  app.get('/leaders', { schema: listLeaders, config: { cache: true, etag: true } }, async (request) => {
    const p = principal(request);
    requireViewProduct(p);
    return views.leaders(p, request.query);
  });
};
