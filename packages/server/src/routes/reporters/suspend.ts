import type { ReporterRoute } from './route.js';
import { suspendReporter } from './schema.js';

export const suspendReporterRoute: ReporterRoute = (app, { reporters }) => {
  app.post('/:id/suspend', { schema: suspendReporter, config: { product: 'admin' } }, async (request) => ({
    data: await reporters.suspend(request.params.id),
  }));
};
