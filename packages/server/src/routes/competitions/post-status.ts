import { One, Competition, StatusChangeInput } from '@svc/schema';
import { CompetitionIdParams, errorResponses } from '../common.js';
import type { ScheduleFeed } from '../../live/schedule.js';
import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import { principal, type RoutePlugin } from '../types.js';

const postStatus = {
  tags: ['ingestion'],
  summary: 'Move a competition through the schedule lifecycle (postpone, suspend, cancel, resume…)',
  description:
    'An official source (product `source`) changes a competition’s status. Allowed: scheduled → live | postponed | cancelled; live → final | suspended; ' +
    'suspended → live | final | cancelled; postponed → scheduled (with a new `start_time`) | cancelled. Any other move is 409 `invalid_transition`. ' +
    'The status the competition already has is a 200 that changes nothing and emits nothing, unless `start_time` moves the start (a postponed game’s new tentative date, a scheduled game’s new kick-off): that is a change like any other. Each change is a `status` event on the stream, to webhooks, ' +
    'in the game’s events, the export and the change feed (docs/schedule.md).',
  params: CompetitionIdParams,
  body: StatusChangeInput,
  response: { 200: One(Competition), ...errorResponses },
};

export const postStatusRoutes: RoutePlugin<{ schedule: ScheduleFeed }> = async (app, { schedule }) => {
  app.post('/competitions/:id/status', { schema: postStatus, config: { product: 'source' } }, async (request) => {
    const who = principal(request);
    return { data: await answerWithin(WRITE_DEADLINE_MS, () => schedule.change(who, request.params.id, request.body)) };
  });
};
