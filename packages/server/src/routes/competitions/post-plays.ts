import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { ListOf, MAX_PLAY_BATCH, Play, PlayBatch, PlayInput, PlayWithdrawalInput, SCORE_WITHDRAWN, type AnyPlayInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import { invalid, SvcError } from '../../domain/errors.js';
import { CompetitionIdParams, errorResponses } from '../common.js';
import type { OfficialFeed } from '../../live/official.js';
import { principal, type RoutePlugin } from '../types.js';

const postPlays = {
  tags: ['ingestion'],
  summary: 'Append official plays (svc.play.v1) to a competition, or withdraw a confirmed score (`score_withdrawn`); moves its status',
  params: CompetitionIdParams,
  body: Type.Union([PlayInput, PlayWithdrawalInput, PlayBatch]),
  response: { 201: Type.Omit(ListOf(Play), ['next_cursor']), ...errorResponses },
};

/** A batch whose plays are checked one by one (one of them is a correction, which has its own shape). */
const AnyBatch = Type.Object({ plays: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_PLAY_BATCH }) }, { additionalProperties: false });

const isCorrection = (raw: unknown): raw is { event_type: string } =>
  typeof raw === 'object' && raw !== null && 'event_type' in raw && raw.event_type === SCORE_WITHDRAWN;

/** `checkBody` of one play of a batch: the field it names is the batch's (`plays[2].points`). */
function checkItem<T extends TSchema>(schema: T, value: unknown, prefix: string): Static<T> {
  try {
    return checkBody(schema, value);
  } catch (err) {
    if (!(err instanceof SvcError) || prefix === '') throw err;
    throw new SvcError(err.code, err.message, err.param === undefined ? prefix.replace(/\.$/, '') : `${prefix}${err.param}`);
  }
}

/** One play or one correction (docs/corrections.md); a correction without `withdraws` is 400 `missing_field`. */
function checkPlay(raw: unknown, prefix: string): AnyPlayInput {
  if (!isCorrection(raw)) return checkItem(PlayInput, raw, prefix);
  if (!('withdraws' in raw)) throw invalid('missing_field', `'withdraws' is required on a ${SCORE_WITHDRAWN} play: the play (seq) or event (evt_…) it withdraws.`, `${prefix}withdraws`);
  return checkItem(PlayWithdrawalInput, raw, prefix);
}

export const postPlayRoutes: RoutePlugin<{ official: OfficialFeed }> = async (app, { official }) => {
  // Official feeds post at play speed: warnings only, like ingestion.
  app.post('/competitions/:id/plays', { schema: postPlays, attachValidation: true, logLevel: 'warn', config: { product: 'source' } }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const raw: unknown = request.body;
    const batched = typeof raw === 'object' && raw !== null && 'plays' in raw;
    let plays: AnyPlayInput[];
    if (!batched) plays = [checkPlay(raw, '')];
    // A batch holding a correction is checked play by play; any other as it always was, whole.
    else if (Array.isArray(raw.plays) && raw.plays.some(isCorrection)) plays = checkBody(AnyBatch, raw).plays.map((item, i) => checkPlay(item, `plays[${i}].`));
    else plays = checkBody(PlayBatch, raw).plays;
    const who = principal(request);
    const data = await answerWithin(WRITE_DEADLINE_MS, (signal) => official.append(who, request.params.id, plays, batched, signal));
    return reply.code(201).send({ data });
  });
};
