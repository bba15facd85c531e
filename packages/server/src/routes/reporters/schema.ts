import { Type } from '@sinclair/typebox';
import { ListOf, ListReportersQuery, One, Reporter } from '@svc/schema';
import { errorResponses } from '../common.js';

const tags = ['reporters'];

/** `rep_…`: up to 405 characters (domain/consensus/reporter-ids.ts), under the router's 512. */
export const ReporterIdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 405, description: 'The reporter’s id (`rep_…`), as `GET /v1/reporters` lists it.' }) },
  { additionalProperties: false },
);

export const listReporters = {
  tags,
  summary: 'Reporters: each voter’s track record, flag and suspension (product admin)',
  description:
    'Every voter with a track record: an API key’s own voice (`reporter` null) and each end user a key named in a report’s `reporter`, in key order, cursor-paginated. `weight` is the weight its next vote carries; `flagged` follows the documented flag rule (official contradictions, repeated retractions, far more reports than its games had plays: docs/reporters.md). Filters: `key` (one API key’s voters), `flagged`, `suspended` (`true` or `false`).',
  querystring: ListReportersQuery,
  response: { 200: ListOf(Reporter), ...errorResponses },
};

export const suspendReporter = {
  tags,
  summary: 'Suspend a reporter: its reports are stored but count for nothing, its open votes withdrawn at once',
  description:
    'From now on the reporter’s reports are answered 202 and stored, but start and join nothing (`event_id` null). Its votes on open candidates are withdrawn at once on every node, and those candidates judged again without them (one left without a vote is retracted). Decided plays stay decided. Suspending a suspended reporter changes nothing. An id that names no reporter with a stored report or track record is a 404 `resource_not_found`.',
  params: ReporterIdParams,
  response: { 200: One(Reporter), ...errorResponses },
};

export const restoreReporter = {
  tags,
  summary: 'Restore a suspended reporter: its next reports count again',
  description: 'Lifts a suspension; the votes it withdrew stay withdrawn. Restoring a reporter that is not suspended changes nothing. An unknown id is a 404 `resource_not_found`.',
  params: ReporterIdParams,
  response: { 200: One(Reporter), ...errorResponses },
};
