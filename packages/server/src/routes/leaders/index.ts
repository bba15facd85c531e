import type { RoutePlugin, ViewDeps } from '../types.js';
import { listLeadersRoute } from './list.js';

/** GET /v1/leaders (docs/standings.md). */
export const leaderRoutes: RoutePlugin<ViewDeps> = async (app, deps) => {
  listLeadersRoute(app, deps);
};
