import type { RoutePlugin } from '../types.js';
import { cancelReplayRoute } from './cancel.js';
import { createReplayRoute } from './create.js';
import { getReplayRoute } from './get.js';
import { listReplaysRoute } from './list.js';
import type { ReplayRouteDeps } from './route.js';

/** /v1/replays: product `live`, sandbox keys only; a key sees only its own replays (docs/replays.md). */
export const replayRoutes: RoutePlugin<ReplayRouteDeps> = async (app, deps) => {
  for (const route of [createReplayRoute, listReplaysRoute, getReplayRoute, cancelReplayRoute]) route(app, deps);
};
