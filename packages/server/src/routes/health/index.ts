import { SvcError } from '../../domain/errors.js';
import type { CheckName, CheckResult } from '../../health/readiness.js';
import type { Lifecycle } from '../../health/lifecycle.js';
import type { RoutePlugin } from '../types.js';

export interface HealthDeps {
  lifecycle: Lifecycle;
  /** The state of what readiness depends on (health/readiness.ts). */
  readiness: () => Promise<Record<CheckName, CheckResult>>;
}

/**
 * Liveness and readiness for orchestrators and load balancers (docs/operations.md). Public: they
 * say whether this node can serve, never anything about the data.
 */
export const healthRoutes: RoutePlugin<HealthDeps> = async (app, { lifecycle, readiness }) => {
  const live = async () => ({ status: 'ok' });
  app.get('/livez', { config: { public: true }, schema: { hide: true } }, live);
  // The first name of liveness, with its first body; kept for the deployments and scripts that probe it.
  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ ok: true }));

  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async () => {
    if (lifecycle.draining) throw new SvcError('draining', 'This node is shutting down; send traffic to another node.');
    const checks = await readiness();
    const failing = Object.entries(checks).filter(([, r]) => r === 'failing').map(([name]) => name);
    if (failing.length > 0) throw new SvcError('not_ready', `Not ready: ${failing.join(', ')} failing.`);
    return { status: 'ready', checks };
  });
};
