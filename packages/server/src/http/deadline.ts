import { SvcError } from '../domain/errors.js';

/**
 * How long a write call may take in all before it is answered 503 (DESIGN section 7: every call
 * turns into a 503 within 15 s, never a hang; docs/operations.md "Failures and what svc does").
 * Each store round trip has its own bounds (a pool slot within 5 s, an answer within 10 s:
 * store/pg-primary.ts), but a write is several in a row (the game, its lease, the transaction)
 * and may first wait for the game's consensus queue; this bounds their sum, leaving a second for
 * the answer itself.
 */
export const WRITE_DEADLINE_MS = 14_000;

/** The answer past the deadline: the write may still be made after it, so the client retries with its `ref` or Idempotency-Key. */
export const lateWrite = (): SvcError =>
  new SvcError('store_unavailable', 'The database did not answer in time; the write may not have been made. Retry shortly (with the same ref or Idempotency-Key, so it is made once).');

/**
 * Runs `work` with a signal that aborts at `ms`, and answers with its result or, at `ms`, with
 * `late()`. Work still running then goes on (what it already sent to the database may commit);
 * work that honours the signal (the consensus queue: live/ingest.ts) does not start once its
 * caller has been answered. Real time, not the service's clock: this bounds waits on I/O.
 */
export async function answerWithin<T>(ms: number, work: (signal: AbortSignal) => Promise<T>, late: () => SvcError = lateWrite): Promise<T> {
  const gaveUp = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = late();
      gaveUp.abort(e);
      reject(e);
    }, ms);
  });
  const running = work(gaveUp.signal);
  // Answered by the deadline: a later failure of the work has no one to go to.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
