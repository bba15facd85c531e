import type { StatusService } from './service.js';

export interface SamplerLog {
  error(obj: object, msg: string): void;
}

/**
 * Takes the status sample of every minute. It looks every `tickMs` (wall time) and samples when
 * the injected clock has entered a minute not yet sampled, so a late timer never skips a minute
 * and tests drive it by moving the clock and calling `StatusService.sample()` themselves.
 */
export function startStatusSampler(status: StatusService, log: SamplerLog, tickMs = 10_000): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const tick = () => {
    if (running) return;
    running = status
      .sample()
      .catch((err: unknown) => log.error({ err }, 'status sample failed'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, tickMs);
  timer.unref();
  tick();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
