import { Worker } from 'node:worker_threads';

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
    const deadlineMs = opts.deadlineMs ?? DRAIN_DEADLINE_MS;
    if (!opts.exit) killAfter(deadlineMs + WATCHDOG_GRACE_MS);
    setTimeout(() => {
      log.error({ signal, deadline_ms: deadlineMs }, 'drain deadline passed: exiting');
      exit(1);
    }, deadlineMs);
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

/** How long after the drain deadline the watchdog ends a process whose event loop never got to it. */
const WATCHDOG_GRACE_MS = 1_000;

/**
 * The deadline above is a timer of the event loop, which cannot fire while the main thread is
 * blocked (a synchronous write that never returns, a native call that hangs). A thread of its own
 * keeps the promise: it kills the process with SIGKILL after `ms`, whatever the main thread does.
 * It holds no reference, so a process that exits in time exits as it would without it.
 */
function killAfter(ms: number): void {
  const watchdog = new Worker(`setTimeout(() => process.kill(${process.pid}, 'SIGKILL'), ${Math.ceil(ms)});`, { eval: true });
  watchdog.on('error', () => undefined);
  watchdog.unref();
}
