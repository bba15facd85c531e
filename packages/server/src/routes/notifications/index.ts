import { principal, type RoutePlugin } from '../types.js';
import { listNotifications } from './schema.js';

export const notificationRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/notifications', { schema: listNotifications, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor } = request.query;
    return s.webhooks.manage.notifications(principal(request), { limit, cursor });
  });
};
