import { Type } from '@sinclair/typebox';
import { ListOf, Play, PlayBatch, PlayInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import { CompetitionIdParams, errorResponses } from '../common.js';
import type { OfficialFeed } from '../../live/official.js';
import { principal, type RoutePlugin } from '../types.js';

const postPlays = {
  tags: ['ingestion'],
  summary: 'Append official plays (svc.play.v1) to a competition; moves its status',
  params: CompetitionIdParams,
  body: Type.Union([PlayInput, PlayBatch]),
  response: { 201: Type.Omit(ListOf(Play), ['next_cursor']), ...errorResponses },
};

export const postPlayRoutes: RoutePlugin<{ official: OfficialFeed }> = async (app, { official }) => {
  // Official feeds post at play speed: warnings only, like ingestion.
  app.post('/competitions/:id/plays', { schema: postPlays, attachValidation: true, logLevel: 'warn', config: { product: 'source' } }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const raw: unknown = request.body;
    const batched = typeof raw === 'object' && raw !== null && 'plays' in raw;
    const plays = batched ? checkBody(PlayBatch, raw).plays : [checkBody(PlayInput, raw)];
    const who = principal(request);
    const data = await answerWithin(WRITE_DEADLINE_MS, (signal) => official.append(who, request.params.id, plays, batched, signal));
    return reply.code(201).send({ data });
  });
};
