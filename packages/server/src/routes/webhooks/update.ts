import { principal, type RoutePlugin } from '../types.js';
import { patchWebhook } from './schema.js';

export const updateWebhookRoute: RoutePlugin = (app, s) => {
  app.patch('/v1/webhooks/:id', { schema: patchWebhook, config: { product: 'live' } }, async (request) => ({
    data: await s.webhooks.manage.update(principal(request), request.params.id, request.body),
  }));
};
