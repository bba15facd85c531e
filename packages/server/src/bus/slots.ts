import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';

/**
 * Counts what an API key holds open at once (stream connections, running exports) against its
 * plan's limit, on one node or across the cluster.
 */
export interface SlotCounter {
  /** A token when under the limit, else null. */
  acquire(keyId: string, limit: number): Promise<string | null>;
  release(keyId: string, token: string): Promise<void>;
  close(): Promise<void>;
}

export class MemorySlots implements SlotCounter {
  private open = new Map<string, Set<string>>();
  async acquire(keyId: string, limit: number): Promise<string | null> {
    const set = this.open.get(keyId) ?? new Set<string>();
    if (set.size >= limit) return null;
    const token = crypto.randomUUID();
    set.add(token);
    this.open.set(keyId, set);
    return token;
  }
  async release(keyId: string, token: string): Promise<void> {
    this.open.get(keyId)?.delete(token);
  }
  async close(): Promise<void> {}
}

// Members expire unless their node refreshes them, so a crashed node's connections free up.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

const TTL_MS = 30_000;

export class RedisSlots implements SlotCounter {
  private held = new Map<string, string>();
  private timer: NodeJS.Timeout;
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    /** The Redis key of one API key's slots of this kind (bus/redis-keys.ts). */
    private readonly keyOf: (keyId: string) => string,
  ) {
    this.timer = setInterval(() => void this.refresh(), TTL_MS / 3);
    this.timer.unref();
  }

  async acquire(keyId: string, limit: number): Promise<string | null> {
    const token = crypto.randomUUID();
    const now = this.clock.now();
    const ok = await this.redis.eval(ACQUIRE, 1, this.keyOf(keyId), now, limit, now + TTL_MS, token, TTL_MS * 2);
    if (Number(ok) !== 1) return null;
    this.held.set(token, keyId);
    return token;
  }

  /** Never rejects: a slot Redis did not hear of leaves by itself, unrefreshed, within the TTL. */
  async release(keyId: string, token: string): Promise<void> {
    this.held.delete(token);
    await this.redis.zrem(this.keyOf(keyId), token).catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    const until = this.clock.now() + TTL_MS;
    const pipe = this.redis.pipeline();
    // After a Redis restarted empty this puts every slot the node holds back within TTL_MS / 3.
    for (const [token, keyId] of this.held) pipe.zadd(this.keyOf(keyId), until, token).pexpire(this.keyOf(keyId), TTL_MS * 2);
    if (this.held.size) await pipe.exec().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const pipe = this.redis.pipeline();
    for (const [token, keyId] of this.held) pipe.zrem(this.keyOf(keyId), token);
    this.held.clear();
    await pipe.exec().catch(() => undefined);
  }
}

/**
 * The shared counter while it answers, this node's memory while it does not (Redis away): each
 * node then counts a key's slots on its own rather than refusing every stream and export
 * (docs/operations.md "Faults"). A slot goes back to the counter that gave it.
 */
export class FallbackSlots implements SlotCounter {
  private readonly localTokens = new Set<string>();
  constructor(
    private readonly shared: SlotCounter,
    private readonly local: SlotCounter,
    private readonly available: () => boolean,
  ) {}

  async acquire(keyId: string, limit: number): Promise<string | null> {
    if (this.available()) {
      try {
        return await this.shared.acquire(keyId, limit);
      } catch {
        // counted here instead, below
      }
    }
    const token = await this.local.acquire(keyId, limit);
    if (token !== null) this.localTokens.add(token);
    return token;
  }

  async release(keyId: string, token: string): Promise<void> {
    if (this.localTokens.delete(token)) return this.local.release(keyId, token);
    await this.shared.release(keyId, token);
  }

  async close(): Promise<void> {
    await this.shared.close();
    await this.local.close();
  }
}
