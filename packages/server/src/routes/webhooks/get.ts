import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { getWebhook } from './schema.js';

export const getWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.get('/:id', { schema: getWebhook, config: { product: 'live' } }, async (request) => ({
    data: await manage.get(principal(request), request.params.id),
  }));
};
