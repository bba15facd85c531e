import { CreateReplayInput, ErrorBody, ListOf, One, PageQuery, Replay } from '@svc/schema';
import { errorResponses, idParams } from '../common.js';

const tags = ['replays'];
const responses = { ...errorResponses, 409: ErrorBody };
export const ReplayIdParams = idParams('The replay’s id (`rpl_…`).');

export const createReplay = {
  tags,
  summary: 'Replay a final game through the live pipeline, for the calling sandbox key only',
  description:
    'Plays a final soccer or basketball game again as a new game of its own (`game_id`), its plays in the source’s order with their gaps divided by `speed`: each scoring play arrives as a provisional then a confirmed event through the consensus, the stream and the calling key’s webhook endpoints, as live events do. The replay’s game and events exist for the calling key alone. Sandbox keys only (403 `sandbox_only`); at most 5 scheduled or running replays per key (409 `replay_limit`). An unknown game is a 400 `unknown_game`, a game not final a 409 `game_not_final`.',
  body: CreateReplayInput,
  response: { 201: One(Replay), ...responses },
};
export const listReplays = {
  tags,
  summary: 'Replays of the calling key, newest first',
  querystring: PageQuery,
  response: { 200: ListOf(Replay), ...responses },
};
export const getReplay = { tags, summary: 'One replay with its status', params: ReplayIdParams, response: { 200: One(Replay), ...responses } };
export const cancelReplay = {
  tags,
  summary: 'Cancel a replay; its game ends with a final play at once',
  description: 'A replay already finished or cancelled is answered as it is.',
  params: ReplayIdParams,
  response: { 200: One(Replay), ...responses },
};
