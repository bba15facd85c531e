import type { RoutePlugin, ViewDeps } from '../types.js';
import { listStandingsRoute } from './list.js';

/** GET /v1/standings (docs/standings.md). */
export const standingsRoutes: RoutePlugin<ViewDeps> = async (app, deps) => {
  listStandingsRoute(app, deps);
};
