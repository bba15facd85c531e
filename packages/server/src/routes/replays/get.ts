import { principal } from '../types.js';
import type { ReplayRoute } from './route.js';
import { getReplay } from './schema.js';

export const getReplayRoute: ReplayRoute = (app, { replays }) => {
  app.get('/:id', { schema: getReplay, config: { product: 'live' } }, async (request) => ({
    data: await replays.get(principal(request), request.params.id),
  }));
};
