import type { Metrics } from '../../metrics/index.js';
import type { App, RoutePlugin } from '../types.js';

/**
 * Times every request under its route pattern (a URL would give a series per id and exhaust
 * Prometheus). Registered on the root instance, not in a plugin: it must see every route.
 */
export function registerRequestMetrics(app: App, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** Prometheus metrics (docs/operations.md), for keys with the `admin` product. */
export const metricsRoutes: RoutePlugin<{ metrics: Metrics }> = async (app, { metrics }) => {
  app.get('/metrics', { config: { product: 'admin' }, schema: { hide: true } }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
};
