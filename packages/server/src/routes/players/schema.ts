import { Type } from '@sinclair/typebox';
import { ListOf, One, Player } from '@svc/schema';
import { IdParams, LeagueParam, SeasonParam, SportParam, TeamIdParam, errorResponses, pageQuery } from '../common.js';

export const listPlayers = {
  tags: ['reference'],
  summary: 'List players; team and season filter through rosters',
  querystring: Type.Object(
    {
      sport: Type.Optional(SportParam),
      league: Type.Optional(LeagueParam),
      team: Type.Optional(TeamIdParam),
      season: Type.Optional(SeasonParam),
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Name contains, accent and case insensitive.' })),
      ...pageQuery,
    },
    { additionalProperties: false },
  ),
  response: { 200: ListOf(Player), ...errorResponses },
};

export const getPlayer = {
  tags: ['reference'],
  summary: 'One player',
  params: IdParams,
  response: { 200: One(Player), ...errorResponses },
};
