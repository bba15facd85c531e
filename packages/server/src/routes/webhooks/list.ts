import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { listWebhooks } from './schema.js';

export const listWebhooksRoute: WebhookRoute = (app, { manage }) => {
  app.get('', { schema: listWebhooks, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor } = request.query;
    return manage.list(principal(request), { limit, cursor });
  });
};
