import { principal, type RoutePlugin } from '../types.js';
import { rotateSecret } from './schema.js';

export const rotateSecretRoute: RoutePlugin = (app, s) => {
  app.post('/v1/webhooks/:id/rotate-secret', { schema: rotateSecret, config: { product: 'live' } }, async (request) => {
    const { endpoint, secret } = await s.webhooks.manage.rotateSecret(principal(request), request.params.id);
    return { data: { ...endpoint, secret } };
  });
};
