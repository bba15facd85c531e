import { ListOf, ListTeamsQuery, One, RosterEntry, RosterQuery, Team } from '@svc/schema';
import { errorResponses, TeamIdParams } from '../common.js';

export const listTeams = {
  tags: ['reference'],
  summary: 'List teams',
  querystring: ListTeamsQuery,
  response: { 200: ListOf(Team), ...errorResponses },
};

export const getTeam = {
  tags: ['reference'],
  summary: 'One team',
  params: TeamIdParams,
  response: { 200: One(Team), ...errorResponses },
};

export const getRoster = {
  tags: ['reference'],
  summary: 'A team’s season-scoped roster',
  params: TeamIdParams,
  querystring: RosterQuery,
  response: { 200: ListOf(RosterEntry), ...errorResponses },
};
