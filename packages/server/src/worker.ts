import type { FastifyBaseLogger } from 'fastify';
import type { Services } from './services.js';

/** Background duties of a node with the worker role: consensus timeouts and webhook deliveries. */
export function startWorker(s: Services, log: FastifyBaseLogger): () => void {
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
  return () => {
    clearInterval(timer);
    void s.webhooks.dispatcher.stop();
  };
}
