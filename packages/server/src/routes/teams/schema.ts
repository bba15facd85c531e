import { Type } from '@sinclair/typebox';
import { ListOf, One, RosterEntry, Team } from '@svc/schema';
import { LeagueParam, SeasonParam, SportParam, errorResponses, IdParams, pageQuery } from '../common.js';

export const listTeams = {
  tags: ['reference'],
  summary: 'List teams',
  querystring: Type.Object({ sport: Type.Optional(SportParam), league: Type.Optional(LeagueParam), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Team), ...errorResponses },
};

export const getTeam = {
  tags: ['reference'],
  summary: 'One team',
  params: IdParams,
  response: { 200: One(Team), ...errorResponses },
};

export const getRoster = {
  tags: ['reference'],
  summary: 'A team’s season-scoped roster',
  params: IdParams,
  querystring: Type.Object({ season: Type.Optional(SeasonParam), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(RosterEntry), ...errorResponses },
};
