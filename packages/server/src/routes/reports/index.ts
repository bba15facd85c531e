import { ReportBatch, ReportInput } from '@svc/schema';
import { checkBody } from '../../http/body.js';
import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import type { LiveIngest } from '../../live/ingest.js';
import { principal, type RoutePlugin } from '../types.js';
import { postReports } from './schema.js';

export const reportRoutes: RoutePlugin<{ ingest: LiveIngest }> = async (app, { ingest }) => {
  // Ingestion runs at reporter speed; a log line per report would drown everything else.
  app.post('/reports', { schema: postReports, attachValidation: true, logLevel: 'warn', config: { product: 'report' } }, async (request, reply) => {
    // The union's own error would not say which report is wrong; check the shape the body chose.
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
    const raw: unknown = request.body;
    const batched = typeof raw === 'object' && raw !== null && 'reports' in raw;
    const reports = batched ? checkBody(ReportBatch, raw).reports : [checkBody(ReportInput, raw)];
    const who = principal(request);
    const data = await answerWithin(WRITE_DEADLINE_MS, (signal) => ingest.submit(who, reports, batched, signal));
    return reply.code(202).send({ data });
  });
};
