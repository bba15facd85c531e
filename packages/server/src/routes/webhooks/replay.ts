import { ReplayByDelivery, ReplayRange, type ReplayInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { invalid } from '../../domain/errors.js';
import { principal } from '../types.js';
import type { WebhookRoute } from './route.js';
import { replayWebhook } from './schema.js';

/** The union's own error would not say which shape went wrong; check the shape the body chose. */
function replayInput(raw: unknown): ReplayInput {
  const obj = typeof raw === 'object' && raw !== null ? raw : {};
  if ('delivery_id' in obj) return checkBody(ReplayByDelivery, raw);
  if ('from' in obj || 'to' in obj) return checkBody(ReplayRange, raw);
  throw invalid('missing_field', 'Send {"delivery_id": "dlv_…"} or {"from": "<ISO time>", "to": "<ISO time>"}.', 'delivery_id');
}

export const replayWebhookRoute: WebhookRoute = (app, { manage }) => {
  app.post('/:id/replay', { schema: replayWebhook, attachValidation: true, config: { product: 'live' } }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const data = await manage.replay(principal(request), request.params.id, replayInput(request.body));
    return reply.code(202).send({ data });
  });
};
