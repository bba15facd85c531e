import type { ReplayService } from '../../replays/service.js';
import type { App } from '../types.js';

/** What the replay routes use: the rules of replays/service.ts, nothing else. */
export interface ReplayRouteDeps {
  replays: ReplayService;
}

/** One replay operation; `replayRoutes` registers them all in one encapsulated plugin. */
export type ReplayRoute = (app: App, deps: ReplayRouteDeps) => void;
