import { ListOf, ListVenuesQuery, One, Venue } from '@svc/schema';
import { VenueIdParams, errorResponses } from '../common.js';

export const listVenues = {
  tags: ['reference'],
  summary: 'List venues; sport and league select venues that host their competitions',
  querystring: ListVenuesQuery,
  response: { 200: ListOf(Venue), ...errorResponses },
};

export const getVenue = {
  tags: ['reference'],
  summary: 'One venue',
  params: VenueIdParams,
  response: { 200: One(Venue), ...errorResponses },
};
