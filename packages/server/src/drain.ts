/** A drained node is gone within this long of SIGTERM, whatever is still running (docs/operations.md). */
export const DRAIN_DEADLINE_MS = 9_500;
/** Webhook attempts in flight get this long to finish before their claims are released. */
export const DELIVERY_GRACE_MS = 5_000;

export interface DrainLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * SIGTERM and SIGINT: the first runs `drain` and exits 0 when it is done (1 if it fails or
 * outlives `deadlineMs`); a second signal exits at once (1), for an operator who will not wait.
 */
export function exitOnSignals(drain: () => Promise<void>, log: DrainLog, opts: { deadlineMs?: number; exit?: (code: number) => void } = {}): void {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let draining = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) {
      log.info({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    draining = true;
    log.info({ signal }, 'draining');
    const started = Date.now();
    setTimeout(() => {
      log.error({ signal, deadline_ms: opts.deadlineMs ?? DRAIN_DEADLINE_MS }, 'drain deadline passed: exiting');
      exit(1);
    }, opts.deadlineMs ?? DRAIN_DEADLINE_MS);
    drain().then(
      () => {
        log.info({ ms: Date.now() - started }, 'drained');
        exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'drain failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
