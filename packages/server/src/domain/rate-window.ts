/**
 * Rate limits as a sliding window (docs/operations.md "Rate limits"): a key may spend at most
 * `limit` in any 60 s, whichever 60 s they are. A fixed window (count per clock minute) admits
 * twice the limit across a minute boundary; this does not.
 *
 * Spending is kept in one-second buckets, each with its total and the time of its latest request.
 * A bucket counts until its latest request is 60 s old, so everything spent in the last 60 s is
 * always counted: the bound is exact. It may count a request up to one bucket (1 s) longer than an
 * exact log would, which only ever makes it stricter, while a key's state stays at most 61 buckets
 * whatever its limit. `http/rate-limit.ts` runs this in memory and as one Lua script in Redis.
 *
 * Pure: time comes in as `now` (the injected Clock's), nothing is imported.
 */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_000;

export interface SpendBucket {
  /** floor(time / BUCKET_MS). */
  index: number;
  count: number;
  /** Time of the latest request in the bucket, ms. */
  last: number;
}

export interface WindowDecision {
  allowed: boolean;
  /** What is left to spend in the window after this request. */
  remaining: number;
  /**
   * Admitted: ms until the oldest counted spending leaves the window (`remaining` grows then).
   * Refused: ms until enough has left for this request to be admitted (Retry-After).
   */
  waitMs: number;
}

/** The buckets still in the window at `now`, oldest first. */
export function liveBuckets(buckets: readonly SpendBucket[], now: number): SpendBucket[] {
  return buckets.filter((b) => b.last > now - WINDOW_MS).sort((a, b) => a.index - b.index);
}

/**
 * Decides one request of `cost` at `now` against live buckets (oldest first); returns the
 * decision and the buckets after it (a refused request spends nothing).
 */
export function decideWindow(
  live: readonly SpendBucket[],
  now: number,
  limit: number,
  cost: number,
): { decision: WindowDecision; buckets: SpendBucket[] } {
  const used = live.reduce((n, b) => n + b.count, 0);
  if (used + cost <= limit) {
    const index = Math.floor(now / BUCKET_MS);
    const buckets = live.map((b) => ({ ...b }));
    const current = buckets.find((b) => b.index === index);
    if (current) {
      current.count += cost;
      current.last = Math.max(current.last, now);
    } else buckets.push({ index, count: cost, last: now });
    const oldest = Math.min(...buckets.map((b) => b.last));
    return { decision: { allowed: true, remaining: limit - used - cost, waitMs: oldest + WINDOW_MS - now }, buckets };
  }
  const remaining = Math.max(0, limit - used);
  // More than the whole limit can never fit; a full window is as good an answer as any.
  if (cost > limit) return { decision: { allowed: false, remaining, waitMs: WINDOW_MS }, buckets: [...live] };
  let freed = 0;
  let waitMs = WINDOW_MS;
  for (const b of live) {
    freed += b.count;
    if (used - freed + cost <= limit) {
      waitMs = b.last + WINDOW_MS - now;
      break;
    }
  }
  return { decision: { allowed: false, remaining, waitMs }, buckets: [...live] };
}
