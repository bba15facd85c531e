import { notFound } from '../../domain/errors.js';
import { requireEventAccess } from '../../domain/access.js';
import { requireScope } from '../../domain/scopes.js';
import { principal, type RoutePlugin } from '../types.js';
import { resolveCompetitionQuery } from './filters.js';
import { getCompetition, listCompetitions, listPlays } from './schema.js';

export const competitionRoutes: RoutePlugin = (app, s) => {
  app.get('/v1/competitions', { schema: listCompetitions }, async (request) => {
    const { limit = 100, cursor, ...q } = request.query;
    const { scope, filter } = await resolveCompetitionQuery(s, principal(request), q);
    return s.competitions.list(scope, filter, { limit, cursor });
  });

  app.get('/v1/competitions/:id', { schema: getCompetition }, async (request) => {
    const c = await s.competitions.get(request.params.id);
    if (!c) throw notFound('competition', request.params.id, 'id');
    requireScope(principal(request), c.sport, c.league);
    return { data: c };
  });

  app.get('/v1/competitions/:id/plays', { schema: listPlays }, async (request) => {
    const c = await s.competitions.get(request.params.id);
    if (!c) throw notFound('competition', request.params.id, 'id');
    requireEventAccess(principal(request), c, s.today());
    const { limit = 100, cursor } = request.query;
    return s.competitions.plays(c.id, { limit, cursor });
  });
};
