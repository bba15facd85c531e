import { principal, type RoutePlugin } from '../types.js';
import { testWebhook } from './schema.js';

export const testWebhookRoute: RoutePlugin = (app, s) => {
  app.post('/v1/webhooks/:id/test', { schema: testWebhook, config: { product: 'live' } }, async (request) => ({
    data: await s.webhooks.manage.sendTest(principal(request), request.params.id),
  }));
};
