import type { App } from '../types.js';
import type { Services } from '../../services.js';

/**
 * Prometheus metrics (docs/operations.md), for keys with the `admin` product. Every request is
 * timed under its route pattern: a URL would give a series per id and exhaust Prometheus.
 */
export function metricsRoutes(app: App, s: Services): void {
  app.addHook('onResponse', (request, reply, done) => {
    s.metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { config: { product: 'admin' }, schema: { hide: true } }, async (_request, reply) =>
    reply.type(s.metrics.contentType).send(await s.metrics.text()),
  );
}
