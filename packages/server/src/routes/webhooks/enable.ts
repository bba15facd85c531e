import { principal, type RoutePlugin } from '../types.js';
import { enableWebhook } from './schema.js';

export const enableWebhookRoute: RoutePlugin = (app, s) => {
  app.post('/v1/webhooks/:id/enable', { schema: enableWebhook, config: { product: 'live' } }, async (request) => ({
    data: await s.webhooks.manage.enable(principal(request), request.params.id),
  }));
};
