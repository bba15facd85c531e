/**
 * Webhook retry schedule and delivery outcomes (`docs/webhooks.md`; `docs/spec/service-spec.md` parts 3, 6 and 8).
 * Pure functions: the caller passes the time (from its Clock) and stores the result.
 */

/** Limits of `docs/spec/service-spec.md` part 8: immediate, 1 min, 5 min, 30 min, then 2 h (SVC_WEBHOOK_RETRY_DELAYS). */
export const DEFAULT_RETRY_DELAYS_S: readonly number[] = [0, 60, 300, 1800, 7200];
/** Plan maximum attempts, default 15 (about 24 h with the default delays). */
export const DEFAULT_MAX_ATTEMPTS = 15;
/** Limits of `docs/spec/service-spec.md` part 8: a receiver must answer within 5 s (SVC_WEBHOOK_TIMEOUT_MS). */
export const DEFAULT_TIMEOUT_MS = 5_000;
/** Limits of `docs/spec/service-spec.md` part 8: 24 h of failing deliveries disables the endpoint (SVC_WEBHOOK_DISABLE_AFTER_S). */
export const DEFAULT_DISABLE_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Seconds to wait before the next attempt, given how many attempts were already made.
 * attemptsMade 0 → delays[0] (attempt 1, immediate), 1 → delays[1] (attempt 2), …; past the end
 * of the list the last delay repeats ("then every 2 h").
 */
export function nextAttemptDelayS(attemptsMade: number, delaysS: readonly number[]): number {
  if (delaysS.length === 0) throw new RangeError('retry delay list is empty');
  if (!Number.isSafeInteger(attemptsMade) || attemptsMade < 0) {
    throw new RangeError(`attemptsMade must be a whole number ≥ 0, got ${attemptsMade}`);
  }
  return delaysS[Math.min(attemptsMade, delaysS.length - 1)];
}

export interface DeliveryAttemptResult {
  /** HTTP status of the receiver's answer; absent when there was none (timeout, connection error). */
  status?: number;
  /** Transport error (timeout, refused connection, refused target); informational. */
  error?: string;
  /** Attempts made so far, counting the one that produced this result. */
  attemptsMade: number;
  maxAttempts: number;
  delaysS: readonly number[];
  /** Time of the decision, epoch ms. */
  now: number;
}

export type DeliveryDecision =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; nextAttemptAt: number }
  | { outcome: 'failed' }
  | { outcome: 'gone' };

export const isSuccessStatus = (status: number | undefined): boolean =>
  status !== undefined && status >= 200 && status <= 299;

/**
 * What to do after an attempt.
 * - 2xx → delivered (a 2xx wins even if an error was also recorded: the receiver acknowledged).
 * - 410 Gone → gone: the receiver says the endpoint no longer exists, so the caller disables the
 *   endpoint at once instead of retrying for a day.
 * - Anything else — 1xx, 3xx (a redirect is a failure: following it could lead to a target we
 *   never validated), 4xx, 5xx, a timeout or a connection error — is a failed attempt: retry
 *   after the next delay until attemptsMade reaches maxAttempts, then failed.
 */
export function deliveryDecision(input: DeliveryAttemptResult): DeliveryDecision {
  const { status, attemptsMade, maxAttempts, delaysS, now } = input;
  if (isSuccessStatus(status)) return { outcome: 'delivered' };
  if (status === 410) return { outcome: 'gone' };
  if (attemptsMade >= maxAttempts) return { outcome: 'failed' };
  return { outcome: 'retry', nextAttemptAt: now + nextAttemptDelayS(attemptsMade, delaysS) * 1000 };
}

export interface AutoDisableInput {
  /** Epoch ms of the endpoint's last 2xx, or null if it never had one. */
  lastSuccessAt: number | null;
  /** Epoch ms of the first failed attempt after the last 2xx (the current failure streak), or null. */
  firstFailureSinceSuccessAt: number | null;
  now: number;
  disableAfterMs: number;
}

/**
 * True when the endpoint should be auto-disabled: attempts have failed without a single 2xx for
 * at least disableAfterMs (exactly 24 h counts). The window starts at the first failure, not at
 * the last success, so an endpoint that was quiet for a week and fails once is not disabled,
 * and an endpoint that has never failed never is. Evaluate it when an attempt fails.
 */
export function shouldAutoDisable(input: AutoDisableInput): boolean {
  const { lastSuccessAt, firstFailureSinceSuccessAt, now, disableAfterMs } = input;
  if (firstFailureSinceSuccessAt === null) return false;
  // A success at or after the streak's start means the streak was broken (stale bookkeeping).
  if (lastSuccessAt !== null && lastSuccessAt >= firstFailureSinceSuccessAt) return false;
  return now - firstFailureSinceSuccessAt >= disableAfterMs;
}
