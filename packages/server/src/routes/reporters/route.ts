import type { Reporters } from '../../live/reporters.js';
import type { App } from '../types.js';

/** What the reporter routes use: the operator's view of the crowd (live/reporters.ts), nothing else. */
export interface ReporterRouteDeps {
  reporters: Reporters;
}

/** One reporter operation; `reporterRoutes` registers them all in one encapsulated plugin. */
export type ReporterRoute = (app: App, deps: ReporterRouteDeps) => void;
