import { principal, type RoutePlugin } from '../types.js';
import { listWebhooks } from './schema.js';

export const listWebhooksRoute: RoutePlugin = (app, s) => {
  app.get('/v1/webhooks', { schema: listWebhooks, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor } = request.query;
    return s.webhooks.manage.list(principal(request), { limit, cursor });
  });
};
