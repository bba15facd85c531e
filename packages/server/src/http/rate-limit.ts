import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import type { RedisKeys } from '../bus/redis-keys.js';

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetS: number;
  allowed: boolean;
}

/** Fixed one-minute windows per key. */
export interface RateLimiter {
  /** Counts `cost` requests (1 unless the work is several requests' worth, e.g. a stream replay). */
  hit(keyId: string, limit: number, cost?: number): Promise<RateDecision>;
}

const WINDOW_MS = 60_000;

function decide(count: number, limit: number, now: number): RateDecision {
  const windowEnd = (Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS;
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetS: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    allowed: count <= limit,
  };
}

export class MemoryRateLimiter implements RateLimiter {
  private window = -1;
  private counts = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  async hit(keyId: string, limit: number, cost = 1): Promise<RateDecision> {
    const now = this.clock.now();
    const w = Math.floor(now / WINDOW_MS);
    if (w !== this.window) {
      this.window = w;
      this.counts.clear();
    }
    const count = (this.counts.get(keyId) ?? 0) + cost;
    this.counts.set(keyId, count);
    return decide(count, limit, now);
  }
}

/** Shared across nodes: one INCR per request on a key that expires with its window. */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly keys: RedisKeys,
  ) {}

  async hit(keyId: string, limit: number, cost = 1): Promise<RateDecision> {
    const now = this.clock.now();
    const w = Math.floor(now / WINDOW_MS);
    const k = `${this.keys.rateLimit(keyId)}:${w}`;
    const [[, count]] = (await this.redis.multi().incrby(k, cost).pexpire(k, WINDOW_MS * 2).exec()) ?? [[null, 0]];
    return decide(Number(count), limit, now);
  }
}
