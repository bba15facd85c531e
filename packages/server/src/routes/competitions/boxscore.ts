import { BoxScore, One } from '@svc/schema';
import { requireEventAccess } from '../../domain/access.js';
import { notFound } from '../../domain/errors.js';
import { visibleTo } from '../../domain/scopes.js';
import { requireViewProduct } from '../../standings/service.js';
import { CompetitionIdParams, errorResponses } from '../common.js';
import { principal, type RoutePlugin, type ViewDeps } from '../types.js';

export const getBoxScore = {
  tags: ['competitions'],
  summary: 'The box score of a competition: line score by period, shoot-out, scorers, winner',
  params: CompetitionIdParams,
  response: { 200: One(BoxScore), ...errorResponses },
};

/** GET /v1/competitions/:id/boxscore: the same products and eligibility as its plays (docs/standings.md). */
export const boxScoreRoutes: RoutePlugin<ViewDeps> = async (app, { views, competitions, today }) => {
  app.get('/competitions/:id/boxscore', { schema: getBoxScore, config: { cache: true, etag: true } }, async (request) => {
    const p = principal(request);
    const c = await competitions.get(request.params.id);
    // Another key's sandbox replay does not exist for this key (docs/replays.md).
    if (!c || !visibleTo(c.ownerKeyId, p.keyId)) throw notFound('competition', request.params.id, 'id');
    requireViewProduct(p);
    requireEventAccess(p, c, today());
    return { data: await views.boxScore(c) };
  });
};
