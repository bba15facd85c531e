import { principal, type RoutePlugin } from '../types.js';
import { listDeliveries } from './schema.js';

export const listDeliveriesRoute: RoutePlugin = (app, s) => {
  app.get('/v1/webhooks/:id/deliveries', { schema: listDeliveries, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor, status } = request.query;
    return s.webhooks.manage.deliveries(principal(request), request.params.id, status, { limit, cursor });
  });
};
