import { Type } from '@sinclair/typebox';
import { ListOf, Play } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { IdParams, errorResponses } from '../common.js';
import { principal, type RoutePlugin } from '../types.js';

export const PlayInput = Type.Object(
  {
    period: Type.Object(
      { unit: Type.String({ minLength: 1, maxLength: 32 }), num: Type.Integer({ minimum: 1, maximum: 100 }), label: Type.String({ minLength: 1, maxLength: 64 }) },
      { additionalProperties: false },
    ),
    competitor_id: Type.String({ minLength: 1, maxLength: 128 }),
    player_id: Type.Optional(Type.String({ minLength: 1, maxLength: 160 })),
    event_type: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_]+$' }),
    points: Type.Integer({ minimum: 0, maximum: 1000 }),
    clock: Type.Optional(Type.String({ maxLength: 32 })),
    ts: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
const PlayBatch = Type.Object({ plays: Type.Array(PlayInput, { minItems: 1, maxItems: 500 }) }, { additionalProperties: false });

const postPlays = {
  tags: ['ingestion'],
  summary: 'Append official plays (svc.play.v1) to a competition; moves its status',
  params: IdParams,
  body: Type.Union([PlayInput, PlayBatch]),
  response: { 201: Type.Omit(ListOf(Play), ['next_cursor']), ...errorResponses },
};

export const postPlayRoutes: RoutePlugin = (app, s) => {
  app.post('/v1/competitions/:id/plays', { schema: postPlays, attachValidation: true, config: { product: 'source' } }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const raw: unknown = request.body;
    const batched = typeof raw === 'object' && raw !== null && 'plays' in raw;
    const plays = batched ? checkBody(PlayBatch, raw).plays : [checkBody(PlayInput, raw)];
    const data = await s.live.official.append(principal(request), request.params.id, plays, batched);
    return reply.code(201).send({ data });
  });
};
