import { principal, type RoutePlugin } from '../types.js';
import { getWebhook } from './schema.js';

export const getWebhookRoute: RoutePlugin = (app, s) => {
  app.get('/v1/webhooks/:id', { schema: getWebhook, config: { product: 'live' } }, async (request) => ({
    data: await s.webhooks.manage.get(principal(request), request.params.id),
  }));
};
