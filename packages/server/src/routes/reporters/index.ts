import type { RoutePlugin } from '../types.js';
import { listReportersRoute } from './list.js';
import { restoreReporterRoute } from './restore.js';
import type { ReporterRouteDeps } from './route.js';
import { suspendReporterRoute } from './suspend.js';

/** /v1/reporters: product `admin`; the operator's view of the crowd (docs/reporters.md). */
export const reporterRoutes: RoutePlugin<ReporterRouteDeps> = async (app, deps) => {
  for (const route of [listReportersRoute, suspendReporterRoute, restoreReporterRoute]) route(app, deps);
};
