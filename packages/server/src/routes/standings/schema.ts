import { Standings, StandingsQuery } from '@svc/schema';
import { errorResponses } from '../common.js';

export const listStandings = {
  tags: ['standings'],
  summary: 'Standings of a season: one table per group, live games at their current score',
  querystring: StandingsQuery,
  response: { 200: Standings, ...errorResponses },
};
