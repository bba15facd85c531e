import { ListOf, ListPlayersQuery, One, Player } from '@svc/schema';
import { PlayerIdParams, errorResponses } from '../common.js';

export const listPlayers = {
  tags: ['reference'],
  summary: 'List players; team and season filter through rosters',
  querystring: ListPlayersQuery,
  response: { 200: ListOf(Player), ...errorResponses },
};

export const getPlayer = {
  tags: ['reference'],
  summary: 'One player',
  params: PlayerIdParams,
  response: { 200: One(Player), ...errorResponses },
};
