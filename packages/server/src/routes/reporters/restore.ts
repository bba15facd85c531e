import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import type { ReporterRoute } from './route.js';
import { restoreReporter } from './schema.js';

export const restoreReporterRoute: ReporterRoute = (app, { reporters }) => {
  app.post('/:id/restore', { schema: restoreReporter, config: { product: 'admin' } }, async (request) => ({
    data: await answerWithin(WRITE_DEADLINE_MS, () => reporters.restore(request.params.id)),
  }));
};
