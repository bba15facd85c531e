import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { createWebhook } from './schema.js';

export const createWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.post('', { schema: createWebhook, config: { product: 'live' } }, async (request, reply) => {
    const { endpoint, secret } = await manage.create(principal(request), request.body);
    return reply.code(201).send({ data: { ...endpoint, secret } });
  });
};
