import { answerWithin, WRITE_DEADLINE_MS } from '../../http/deadline.js';
import type { ReporterRoute } from './route.js';
import { suspendReporter } from './schema.js';

export const suspendReporterRoute: ReporterRoute = (app, { reporters }) => {
  // Bounded like every write (http/deadline.ts): suspending again is harmless, so a 503 is retried as it is.
  app.post('/:id/suspend', { schema: suspendReporter, config: { product: 'admin' } }, async (request) => ({
    data: await answerWithin(WRITE_DEADLINE_MS, (signal) => reporters.suspend(request.params.id, signal)),
  }));
};
