import { Leader, LeadersQuery, ListOf } from '@svc/schema';
import { errorResponses } from '../common.js';

export const listLeaders = {
  tags: ['standings'],
  summary: 'A season’s leaders in a stat (goals, points, an event type)',
  querystring: LeadersQuery,
  response: { 200: ListOf(Leader), ...errorResponses },
};
