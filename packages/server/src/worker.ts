import type { FastifyBaseLogger } from 'fastify';
import type { Services } from './services.js';

/** Background duties of a node with the worker role: consensus timeouts and webhook deliveries. */
/** Returns a stop function that resolves once in-flight deliveries have finished. */
export function startWorker(s: Services, log: FastifyBaseLogger): () => Promise<void> {
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
  }, 1000);
  timer.unref();
  s.webhooks.dispatcher.start(log);
  return async () => {
    clearInterval(timer);
    await s.webhooks.dispatcher.stop();
  };
}
