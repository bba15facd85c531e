import { principal } from '../types.js';
import type { ReplayRoute } from './route.js';
import { createReplay } from './schema.js';

export const createReplayRoute: ReplayRoute = (app, { replays }) => {
  app.post('', { schema: createReplay, config: { product: 'live' } }, async (request, reply) => {
    const data = await replays.create(principal(request), request.body);
    return reply.code(201).send({ data });
  });
};
