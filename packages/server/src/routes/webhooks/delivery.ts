import { principal, type RoutePlugin } from '../types.js';
import { getDelivery } from './schema.js';

export const getDeliveryRoute: RoutePlugin = (app, s) => {
  app.get('/v1/webhooks/:id/deliveries/:delivery_id', { schema: getDelivery, config: { product: 'live' } }, async (request) => ({
    data: await s.webhooks.manage.delivery(principal(request), request.params.id, request.params.delivery_id),
  }));
};
