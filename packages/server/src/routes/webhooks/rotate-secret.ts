import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { rotateSecret } from './schema.js';

export const rotateSecretRoute: WebhookRoute = (app, { manage }) => {
  app.post('/:id/rotate-secret', { schema: rotateSecret, config: { product: 'live' } }, async (request) => {
    const { endpoint, secret } = await manage.rotateSecret(principal(request), request.params.id);
    return { data: { ...endpoint, secret } };
  });
};
