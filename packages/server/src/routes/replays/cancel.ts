import { principal } from '../types.js';
import type { ReplayRoute } from './route.js';
import { cancelReplay } from './schema.js';

export const cancelReplayRoute: ReplayRoute = (app, { replays }) => {
  app.delete('/:id', { schema: cancelReplay, config: { product: 'live' } }, async (request) => ({
    data: await replays.cancel(principal(request), request.params.id),
  }));
};
