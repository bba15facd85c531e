import { principal, type RoutePlugin } from '../types.js';
import { deleteWebhook } from './schema.js';

export const deleteWebhookRoute: RoutePlugin = (app, s) => {
  app.delete('/v1/webhooks/:id', { schema: deleteWebhook, config: { product: 'live' } }, async (request) => {
    await s.webhooks.manage.remove(principal(request), request.params.id);
    return { data: { id: request.params.id, deleted: true as const } };
  });
};
