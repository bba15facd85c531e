import { Competition, Event, Game, GameEventsQuery, ListCompetitionsQuery, ListGamesQuery, ListOf, One, PageQuery, Play } from '@svc/schema';
import { CompetitionIdParams, GameIdParams, errorResponses } from '../common.js';

export const listCompetitions = {
  tags: ['competitions'],
  summary: 'List competitions (games, matches, rounds, bouts), oldest date first',
  querystring: ListCompetitionsQuery,
  response: { 200: ListOf(Competition), ...errorResponses },
};

export const getCompetition = {
  tags: ['competitions'],
  summary: 'One competition',
  params: CompetitionIdParams,
  response: { 200: One(Competition), ...errorResponses },
};

export const listPlays = {
  tags: ['competitions'],
  summary: 'Official play-by-play (svc.play.v1) of a competition',
  params: CompetitionIdParams,
  querystring: PageQuery,
  response: { 200: ListOf(Play), ...errorResponses },
};

export const listGames = {
  tags: ['games'],
  summary: 'Team-sport competitions as games, with status and eligibility',
  querystring: ListGamesQuery,
  response: { 200: ListOf(Game), ...errorResponses },
};

export const getGame = {
  tags: ['games'],
  summary: 'One game',
  params: GameIdParams,
  response: { 200: One(Game), ...errorResponses },
};

export const listGameEvents = {
  tags: ['games'],
  summary: 'Confirmed events (svc.event.v1) of a game: scoring events and status changes',
  params: GameIdParams,
  querystring: GameEventsQuery,
  response: { 200: ListOf(Event), ...errorResponses },
};
