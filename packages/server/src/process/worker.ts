import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import { startStatusSampler } from '../status/sampler.js';

/**
 * Background duties of a node, by role. Every node ticks its consensus (docs/consensus.md,
 * "Cluster"): it renews the leases of the games it owns, takes over games whose owner died, and
 * runs their retractions and re-checks — any node may own games, api nodes included, since a
 * game goes to the node its first report reached. Webhook deliveries run on worker (and
 * all-in-one) nodes only.
 * Every node also samples the status history each minute (the first node to record a minute
 * wins), so the history keeps going while any node is up.
 * Returns a stop function that resolves once in-flight deliveries have finished, or, given a
 * grace period, once they finished or were released for another worker.
 */
export function startBackground(role: Config['role'], s: Services, log: FastifyBaseLogger, tickMs = 1000): (graceMs?: number) => Promise<void> {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    s.live.ingest
      .tick()
      .catch((err: unknown) => log.error({ err }, 'consensus tick failed'))
      .finally(() => {
        running = false;
      });
  }, tickMs);
  timer.unref();
  const delivers = role !== 'api';
  if (delivers) s.webhooks.dispatcher.start(log);
  // Any node may drive a replay; claims in the database give each to one (docs/replays.md).
  s.replays.driver.start((line) => log.warn({ replays: true }, line));
  const stopSampler = startStatusSampler(s.status, log);
  // The change feed's retention (docs/changes.md): any node may prune; deleting twice is harmless.
  const prune = () => void s.changes.prune().catch((err: unknown) => log.warn({ err }, 'change feed prune failed'));
  const pruner = setInterval(prune, 3_600_000);
  pruner.unref();
  prune();
  return async (graceMs) => {
    clearInterval(timer);
    clearInterval(pruner);
    await s.replays.driver.stop();
    await stopSampler();
    if (delivers) await s.webhooks.dispatcher.stop(graceMs);
  };
}
