import { ReportBatch, ReportInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { principal, type RoutePlugin } from '../types.js';
import { postReports } from './schema.js';

export const reportRoutes: RoutePlugin = (app, s) => {
  app.post('/v1/reports', { schema: postReports, attachValidation: true, config: { product: 'report' } }, async (request, reply) => {
    // The union's own error would not say which report is wrong; check the shape the body chose.
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const raw: unknown = request.body;
    const batched = typeof raw === 'object' && raw !== null && 'reports' in raw;
    const reports = batched ? checkBody(ReportBatch, raw).reports : [checkBody(ReportInput, raw)];
    const data = await s.live.ingest.submit(principal(request), reports, batched);
    return reply.code(202).send({ data });
  });
};
