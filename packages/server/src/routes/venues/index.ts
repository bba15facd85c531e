import { notFound } from '../../domain/errors.js';
import { inScope, requireScope } from '../../domain/scopes.js';
import { principal, type ReferenceDeps, type RoutePlugin } from '../types.js';
import { getVenue, listVenues } from './schema.js';

export const venueRoutes: RoutePlugin<ReferenceDeps> = async (app, { reference, leagues }) => {
  app.get('/venues', { schema: listVenues, config: { cache: true } }, async (request) => {
    const { sport, league, limit = 100, cursor } = request.query;
    const scope = await leagues.scope(principal(request), sport, league);
    return reference.listVenues(scope, { limit, cursor });
  });

  app.get('/venues/:id', { schema: getVenue, config: { cache: true } }, async (request) => {
    const found = await reference.venue(request.params.id);
    if (!found) throw notFound('venue', request.params.id, 'id');
    const p = principal(request);
    // A venue is visible when it hosts at least one competition the key may see.
    const visible = found.sports.length === 0 || found.sports.some((sp, i) => inScope(p, sp, found.leagues[i]));
    if (!visible) requireScope(p, found.sports[0], found.leagues[0]);
    return { data: found.venue };
  });
};
