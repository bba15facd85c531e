import { Me, One } from '@svc/schema';
import { errorResponses } from '../common.js';
import { principal, type RoutePlugin } from '../types.js';

export const meRoutes: RoutePlugin = async (app) => {
  app.get(
    '/me',
    { schema: { tags: ['account'], summary: 'The calling key: plan, products, scope and limits', response: { 200: One(Me), ...errorResponses } } },
    async (request) => {
      const p = principal(request);
      return {
        data: {
          id: p.keyId,
          name: p.name,
          environment: p.environment,
          plan: p.plan.name,
          products: [...p.products],
          sports: p.sports ? [...p.sports] : null,
          leagues: p.leagues ? [...p.leagues] : null,
          rate_limit: { limit: p.plan.requestsPerMinute, window_s: 60 },
          stream_connections: { limit: p.plan.streamConnections },
        },
      };
    },
  );
};
