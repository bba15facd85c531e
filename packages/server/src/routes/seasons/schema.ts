import { ListOf, ListSeasonsQuery, Season } from '@svc/schema';
import { errorResponses } from '../common.js';

export const listSeasons = {
  tags: ['reference'],
  summary: 'Seasons per league, with how far the archive goes back and per-season counts',
  querystring: ListSeasonsQuery,
  response: { 200: ListOf(Season), ...errorResponses },
};
