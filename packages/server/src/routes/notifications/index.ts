import type { WebhookManager } from '../../webhooks/manage.js';
import { principal, type RoutePlugin } from '../types.js';
import { listNotifications } from './schema.js';

export const notificationRoutes: RoutePlugin<{ manage: WebhookManager }> = async (app, { manage }) => {
  app.get('/notifications', { schema: listNotifications, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor } = request.query;
    return manage.notifications(principal(request), { limit, cursor });
  });
};
