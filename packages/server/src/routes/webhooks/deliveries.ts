import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { listDeliveries } from './schema.js';

export const listDeliveriesRoute: WebhookRoute = (app, { manage }) => {
  app.get('/:id/deliveries', { schema: listDeliveries, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor, status } = request.query;
    return manage.deliveries(principal(request), request.params.id, status, { limit, cursor });
  });
};
