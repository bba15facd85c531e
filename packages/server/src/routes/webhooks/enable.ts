import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { enableWebhook } from './schema.js';

export const enableWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.post('/:id/enable', { schema: enableWebhook, config: { product: 'live' } }, async (request) => ({
    data: await manage.enable(principal(request), request.params.id),
  }));
};
