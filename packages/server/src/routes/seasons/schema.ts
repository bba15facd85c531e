import { Type } from '@sinclair/typebox';
import { ListOf, Season } from '@svc/schema';
import { LeagueParam, SportParam, errorResponses, pageQuery } from '../common.js';

export const listSeasons = {
  tags: ['reference'],
  summary: 'Seasons per league, with how far the archive goes back and per-season counts',
  querystring: Type.Object({ league: Type.Optional(LeagueParam), sport: Type.Optional(SportParam), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Season), ...errorResponses },
};
