import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { deleteWebhook } from './schema.js';

export const deleteWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.delete('/:id', { schema: deleteWebhook, config: { product: 'live' } }, async (request) => {
    await manage.remove(principal(request), request.params.id);
    return { data: { id: request.params.id, deleted: true as const } };
  });
};
