import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { patchWebhook } from './schema.js';

export const updateWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.patch('/:id', { schema: patchWebhook, config: { product: 'live' } }, async (request) => ({
    data: await manage.update(principal(request), request.params.id, request.body),
  }));
};
