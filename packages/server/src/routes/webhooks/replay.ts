import { ReplayByDelivery, ReplayRange, type ReplayInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { invalid } from '../../domain/errors.js';
import { principal, type RoutePlugin } from '../types.js';
import { replayWebhook } from './schema.js';

/** The union's own error would not say which shape went wrong; check the shape the body chose. */
function replayInput(raw: unknown): ReplayInput {
  const obj = typeof raw === 'object' && raw !== null ? raw : {};
  if ('delivery_id' in obj) return checkBody(ReplayByDelivery, raw);
  if ('from' in obj || 'to' in obj) return checkBody(ReplayRange, raw);
  throw invalid('missing_field', 'Send {"delivery_id": "dlv_…"} or {"from": "<ISO time>", "to": "<ISO time>"}.', 'delivery_id');
}

export const replayWebhookRoute: RoutePlugin = (app, s) => {
  app.post('/v1/webhooks/:id/replay', { schema: replayWebhook, attachValidation: true, config: { product: 'live' } }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const data = await s.webhooks.manage.replay(principal(request), request.params.id, replayInput(request.body));
    return reply.code(202).send({ data });
  });
};
