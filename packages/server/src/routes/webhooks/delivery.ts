import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { getDelivery } from './schema.js';

export const getDeliveryRoute: WebhookRoute = (app, { manage }) => {
  app.get('/:id/deliveries/:delivery_id', { schema: getDelivery, config: { product: 'live' } }, async (request) => ({
    data: await manage.delivery(principal(request), request.params.id, request.params.delivery_id),
  }));
};
