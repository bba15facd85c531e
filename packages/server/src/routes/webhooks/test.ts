import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { testWebhook } from './schema.js';

export const testWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.post('/:id/test', { schema: testWebhook, config: { product: 'live' } }, async (request) => ({
    data: await manage.sendTest(principal(request), request.params.id),
  }));
};
