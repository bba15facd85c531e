import { principal, type RoutePlugin } from '../types.js';
import { createWebhook } from './schema.js';

export const createWebhookRoute: RoutePlugin = (app, s) => {
  app.post('/v1/webhooks', { schema: createWebhook, config: { product: 'live' } }, async (request, reply) => {
    const { endpoint, secret } = await s.webhooks.manage.create(principal(request), request.body);
    return reply.code(201).send({ data: { ...endpoint, secret } });
  });
};
