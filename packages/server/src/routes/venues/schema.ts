import { Type } from '@sinclair/typebox';
import { ListOf, One, Venue } from '@svc/schema';
import { IdParams, LeagueParam, SportParam, errorResponses, pageQuery } from '../common.js';

export const listVenues = {
  tags: ['reference'],
  summary: 'List venues; sport and league select venues that host their competitions',
  querystring: Type.Object({ sport: Type.Optional(SportParam), league: Type.Optional(LeagueParam), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Venue), ...errorResponses },
};

export const getVenue = {
  tags: ['reference'],
  summary: 'One venue',
  params: IdParams,
  response: { 200: One(Venue), ...errorResponses },
};
