import type { RoutePlugin } from '../types.js';
import { getStatus } from './schema.js';

/** Public status: no key, no scope — it shows the service's health, never data. The page is web/status/. */
export const statusRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/status', { config: { public: true }, schema: getStatus }, async () => ({ data: await s.status.report() }));
};
