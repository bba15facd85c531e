import { Type } from '@sinclair/typebox';
import { Competition, Event, Game, ListOf, One, Play } from '@svc/schema';
import { DateParam, IdParams, LeagueParam, PlayerIdParam, SeasonParam, SportParam, StatusParam, TeamIdParam, errorResponses, pageQuery } from '../common.js';

export const competitionFilters = {
  sport: Type.Optional(SportParam),
  league: Type.Optional(LeagueParam),
  season: Type.Optional(SeasonParam),
  date: Type.Optional(DateParam),
  team: Type.Optional(TeamIdParam),
  player: Type.Optional(PlayerIdParam),
  status: Type.Optional(StatusParam),
};

export const listCompetitions = {
  tags: ['competitions'],
  summary: 'List competitions (games, matches, rounds, bouts), oldest date first',
  querystring: Type.Object({ ...competitionFilters, ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Competition), ...errorResponses },
};

export const getCompetition = {
  tags: ['competitions'],
  summary: 'One competition',
  params: IdParams,
  response: { 200: One(Competition), ...errorResponses },
};

export const listPlays = {
  tags: ['competitions'],
  summary: 'Official play-by-play (svc.play.v1) of a competition',
  params: IdParams,
  querystring: Type.Object({ ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Play), ...errorResponses },
};

export const listGames = {
  tags: ['games'],
  summary: 'Team-sport competitions as games, with status and eligibility',
  querystring: Type.Object({ ...competitionFilters, sport: Type.Optional(Type.Union([Type.Literal('soccer'), Type.Literal('basketball')])), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Game), ...errorResponses },
};

export const getGame = {
  tags: ['games'],
  summary: 'One game',
  params: IdParams,
  response: { 200: One(Game), ...errorResponses },
};

export const listGameEvents = {
  tags: ['games'],
  summary: 'Crowd-confirmed scoring events (svc.event.v1) of a game',
  params: IdParams,
  querystring: Type.Object({ ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Event), ...errorResponses },
};
