import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../src/bus/redis-keys.js';
import { RedisRouter, RouteFailed } from '../src/live/router.js';
import { OwnRedis } from './own-redis.js';

/** What happens to a node's Redis parts when Redis goes away under them. */
describe('Redis going away', () => {
  let redis: OwnRedis;
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    redis = await OwnRedis.start();
    process.on('unhandledRejection', record);
  });
  afterAll(async () => {
    process.off('unhandledRejection', record);
    await redis.stop();
  });

  it('a report routed to another node fails as RouteFailed, and nothing is left to reject later', async () => {
    // As serve.ts makes the client: commands wait in ioredis' queue while it reconnects.
    const pub = new Redis(redis.url, { maxRetriesPerRequest: 2 });
    const sub = pub.duplicate();
    for (const c of [pub, sub]) c.on('error', () => undefined);
    const router = new RedisRouter('node-a', pub, sub, redisKeys('svc-test-outage:'));
    try {
      await router.whenReady();
      await redis.stop();
      const started = Date.now();
      await expect(router.send('node-b', { kind: 'forget', gameId: 'soccer_1' }, 300)).rejects.toBeInstanceOf(RouteFailed);
      expect(Date.now() - started).toBeLessThan(5_000);
      // Long enough for the request's own timer and ioredis' retries to have run out.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(unhandled).toEqual([]);
    } finally {
      await router.close().catch(() => undefined);
      pub.disconnect();
      sub.disconnect();
      await redis.resume();
    }
  }, 30_000);
});
