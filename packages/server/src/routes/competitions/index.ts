import { notFound } from '../../domain/errors.js';
import { requireEventAccess } from '../../domain/access.js';
import { requireScope, visibleTo } from '../../domain/scopes.js';
import { principal, type CompetitionListDeps, type RoutePlugin } from '../types.js';
import { sendSerialized } from '../../http/serialized.js';
import { resolveCompetitionQuery } from './filters.js';
import { getCompetition, listCompetitions, listPlays } from './schema.js';

export const competitionRoutes: RoutePlugin<CompetitionListDeps> = async (app, deps) => {
  const { competitions, settledDays, today } = deps;
  app.get('/competitions', { schema: listCompetitions, config: { cache: true } }, async (request, reply) => {
    const { limit = 100, cursor, ...q } = request.query;
    const { scope, filter } = await resolveCompetitionQuery(deps, principal(request), q);
    const settled = await settledDays.page(scope, filter, { limit, cursor });
    if (settled !== undefined) {
      // Built again from memory for less than keeping it would cost: the response cache passes.
      request.cached = null;
      return sendSerialized(reply, settled);
    }
    return competitions.list(scope, filter, { limit, cursor });
  });

  app.get('/competitions/:id', { schema: getCompetition, config: { cache: true } }, async (request) => {
    const c = await competitions.get(request.params.id);
    // Another key's sandbox replay does not exist for this key (docs/replays.md).
    if (!c || !visibleTo(c.ownerKeyId, principal(request).keyId)) throw notFound('competition', request.params.id, 'id');
    requireScope(principal(request), c.sport, c.league);
    return { data: c };
  });

  app.get('/competitions/:id/plays', { schema: listPlays, config: { cache: true } }, async (request) => {
    const c = await competitions.get(request.params.id);
    // Another key's sandbox replay does not exist for this key (docs/replays.md).
    if (!c || !visibleTo(c.ownerKeyId, principal(request).keyId)) throw notFound('competition', request.params.id, 'id');
    requireEventAccess(principal(request), c, today());
    const { limit = 100, cursor } = request.query;
    return competitions.plays(c.id, { limit, cursor });
  });
};
