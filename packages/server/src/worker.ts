import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Services } from './services.js';
import { startStatusSampler } from './status/sampler.js';

/**
 * Background duties of a node, by role. Every node ticks its own ConsensusEngine (retractions,
 * agreement re-checks): consensus state lives in the process that took the reports, so a node
 * that ingests must also time them out — with ticks only on worker nodes, candidates opened on
 * api nodes were never retracted. Webhook deliveries run on worker (and all-in-one) nodes only.
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
  const stopSampler = startStatusSampler(s.status, log);
  return async (graceMs) => {
    clearInterval(timer);
    await stopSampler();
    if (delivers) await s.webhooks.dispatcher.stop(graceMs);
  };
}
