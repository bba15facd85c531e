import { principal } from '../types.js';
import type { ReplayRoute } from './route.js';
import { listReplays } from './schema.js';

export const listReplaysRoute: ReplayRoute = (app, { replays }) => {
  app.get('', { schema: listReplays, config: { product: 'live' } }, async (request) => {
    const { limit = 100, cursor } = request.query;
    return replays.list(principal(request), { limit, cursor });
  });
};
