import type { ReporterRoute } from './route.js';
import { restoreReporter } from './schema.js';

export const restoreReporterRoute: ReporterRoute = (app, { reporters }) => {
  app.post('/:id/restore', { schema: restoreReporter, config: { product: 'admin' } }, async (request) => ({
    data: await reporters.restore(request.params.id),
  }));
};
