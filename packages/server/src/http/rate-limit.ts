import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import { BUCKET_MS, decideWindow, liveBuckets, WINDOW_MS, type SpendBucket, type WindowDecision } from '../domain/rate-window.js';
import type { RedisKeys } from '../bus/redis-keys.js';

export interface RateDecision {
  limit: number;
  remaining: number;
  /**
   * Whole seconds (at least 1). Admitted: until the oldest request still counted leaves the
   * 60 s window (RateLimit-Reset). Refused: until this request would be admitted (Retry-After).
   */
  resetS: number;
  allowed: boolean;
}

/** A sliding 60 s window per key (`domain/rate-window.ts`): never more than the limit in any 60 s. */
export interface RateLimiter {
  /** Counts `cost` requests (1 unless the work is several requests' worth, e.g. a stream replay). */
  hit(keyId: string, limit: number, cost?: number): Promise<RateDecision>;
}

function rateDecision(d: WindowDecision, limit: number): RateDecision {
  return { limit, remaining: d.remaining, resetS: Math.max(1, Math.ceil(d.waitMs / 1000)), allowed: d.allowed };
}

/** One node: the window's buckets per key in memory, read against the injected clock. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly spending = new Map<string, SpendBucket[]>();
  private lastSweep = 0;
  constructor(private readonly clock: Clock) {}

  async hit(keyId: string, limit: number, cost = 1): Promise<RateDecision> {
    const now = this.clock.now();
    if (now - this.lastSweep >= WINDOW_MS) this.sweep(now);
    const { decision, buckets } = decideWindow(liveBuckets(this.spending.get(keyId) ?? [], now), now, limit, cost);
    if (buckets.length > 0) this.spending.set(keyId, buckets);
    else this.spending.delete(keyId);
    return rateDecision(decision, limit);
  }

  /** Forgets keys with nothing left in the window, so idle keys cost no memory. */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, buckets] of this.spending) if (liveBuckets(buckets, now).length === 0) this.spending.delete(key);
  }
}

/**
 * `domain/rate-window.ts` as one Lua script, so a decision and its spending are one atomic step
 * across every node. A hash per key: field = bucket index, value = "<count>:<last ms>".
 * KEYS[1] the key's hash; ARGV now, limit, cost, window ms, bucket ms.
 * Returns {allowed 0|1, remaining, wait ms}.
 */
const HIT = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local bucketMs = tonumber(ARGV[5])
local raw = redis.call('HGETALL', KEYS[1])
local live = {}
local used = 0
for i = 1, #raw, 2 do
  local c, l = string.match(raw[i + 1], '^(%d+):(%d+)$')
  local count = tonumber(c)
  local last = tonumber(l)
  if count == nil or last == nil or last <= now - window then
    redis.call('HDEL', KEYS[1], raw[i])
  else
    live[#live + 1] = { tonumber(raw[i]), count, last }
    used = used + count
  end
end
table.sort(live, function(a, b) return a[1] < b[1] end)
if used + cost <= limit then
  local index = math.floor(now / bucketMs)
  local field = string.format('%.0f', index)
  local count = cost
  local last = now
  local oldest = now
  for _, b in ipairs(live) do
    if b[1] == index then
      count = b[2] + cost
      if b[3] > last then last = b[3] end
    end
    if b[3] < oldest then oldest = b[3] end
  end
  redis.call('HSET', KEYS[1], field, string.format('%.0f:%.0f', count, last))
  redis.call('PEXPIRE', KEYS[1], window + bucketMs)
  return { 1, limit - used - cost, oldest + window - now }
end
local remaining = limit - used
if remaining < 0 then remaining = 0 end
if cost > limit then return { 0, remaining, window } end
local freed = 0
for _, b in ipairs(live) do
  freed = freed + b[2]
  if used - freed + cost <= limit then return { 0, remaining, b[3] + window - now } end
end
return { 0, remaining, window }`;
const HIT_SHA = createHash('sha1').update(HIT).digest('hex');

/** Shared across nodes: one atomic script per request on a hash per key that expires with the window. */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly keys: RedisKeys,
  ) {}

  async hit(keyId: string, limit: number, cost = 1): Promise<RateDecision> {
    const now = this.clock.now();
    const args = [1, this.keys.rateLimit(keyId), now, limit, cost, WINDOW_MS, BUCKET_MS] as const;
    // The script by its hash (no script text per request); Redis forgets scripts on restart.
    const reply: unknown = await this.redis.evalsha(HIT_SHA, ...args).catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return this.redis.eval(HIT, ...args);
      throw err;
    });
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error('rate-limit script answered an unexpected shape');
    const [allowed, remaining, waitMs] = reply.map(Number);
    return rateDecision({ allowed: allowed === 1, remaining, waitMs }, limit);
  }
}

/**
 * The shared limiter while it answers, this node's own memory while it does not: with Redis away
 * each node counts a key on its own (so a key may get up to its limit on each node) instead of
 * refusing every metered request (docs/operations.md "Faults"). `available` says whether the
 * shared one is worth asking; a request it fails is counted here instead.
 */
export class FallbackRateLimiter implements RateLimiter {
  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly available: () => boolean,
  ) {}

  async hit(keyId: string, limit: number, cost = 1): Promise<RateDecision> {
    if (!this.available()) return this.local.hit(keyId, limit, cost);
    try {
      return await this.shared.hit(keyId, limit, cost);
    } catch {
      return this.local.hit(keyId, limit, cost);
    }
  }
}
