import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import { decideWindow, liveBuckets, WINDOW_MS, type SpendBucket } from '../src/domain/rate-window.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../src/http/rate-limit.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { auth, freshDb, ManualClock, testConfig } from './helpers.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');

/** A run of requests: gaps (mostly short, some long), costs, one limit. */
const scenario = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  steps: fc.array(
    fc.record({
      gapMs: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 8_000 }), fc.integer({ min: 55_000, max: 65_000 })),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 15 })),
    }),
    { minLength: 1, maxLength: 80 },
  ),
});

/** What was admitted, checked against every 60 s window that ends at an admitted request. */
function expectNoWindowOverLimit(admitted: { at: number; cost: number }[], limit: number): void {
  for (const a of admitted) {
    const spent = admitted.filter((b) => b.at > a.at - WINDOW_MS && b.at <= a.at).reduce((n, b) => n + b.cost, 0);
    expect(spent, `60 s ending ${new Date(a.at).toISOString()}`).toBeLessThanOrEqual(limit);
  }
}

async function replay(limiter: RateLimiter, clock: ManualClock, key: string, s: { limit: number; steps: { gapMs: number; cost: number }[] }) {
  const out: { at: number; cost: number; allowed: boolean; remaining: number; resetS: number }[] = [];
  for (const step of s.steps) {
    clock.advance(step.gapMs);
    const d = await limiter.hit(key, s.limit, step.cost);
    out.push({ at: clock.now(), cost: step.cost, allowed: d.allowed, remaining: d.remaining, resetS: d.resetS });
  }
  return out;
}

describe('sliding-window rate limits (domain/rate-window.ts)', () => {
  it('never admits more than the limit in any 60 s, and admits again when Retry-After says', () => {
    fc.assert(
      fc.property(scenario, ({ limit, steps }) => {
        let buckets: SpendBucket[] = [];
        let now = START + 59_000;
        const admitted: { at: number; cost: number }[] = [];
        for (const { gapMs, cost } of steps) {
          now += gapMs;
          const r = decideWindow(liveBuckets(buckets, now), now, limit, cost);
          if (r.decision.allowed) admitted.push({ at: now, cost });
          else if (cost <= limit) {
            // Waiting what a refusal says (with nothing else spent meanwhile) is enough.
            const later = now + Math.max(1, Math.ceil(r.decision.waitMs / 1000)) * 1000;
            expect(decideWindow(liveBuckets(buckets, later), later, limit, cost).decision.allowed).toBe(true);
            // And it is not far too long: a millisecond before the oldest counted request leaves, nothing has left.
            expect(r.decision.waitMs).toBeGreaterThan(0);
          }
          expect(r.decision.remaining).toBeGreaterThanOrEqual(0);
          expect(r.decision.remaining).toBeLessThanOrEqual(limit);
          buckets = r.buckets;
          expect(buckets.length).toBeLessThanOrEqual(61);
        }
        expectNoWindowOverLimit(admitted, limit);
      }),
      { numRuns: 300 },
    );
  });

  it('is not stricter than one bucket: a request is counted at most 1 s past its 60 s', () => {
    fc.assert(
      fc.property(scenario, ({ limit, steps }) => {
        let buckets: SpendBucket[] = [];
        let now = START;
        const admitted: { at: number; cost: number }[] = [];
        for (const { gapMs, cost } of steps) {
          now += gapMs;
          const r = decideWindow(liveBuckets(buckets, now), now, limit, cost);
          // What an exact log would count over 61 s: refusing below that would be too strict.
          const exact61 = admitted.filter((a) => a.at > now - WINDOW_MS - 1000).reduce((n, a) => n + a.cost, 0);
          if (!r.decision.allowed && cost <= limit) expect(exact61 + cost).toBeGreaterThan(limit);
          if (r.decision.allowed) admitted.push({ at: now, cost });
          buckets = r.buckets;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('memory limiter: the same decisions against the injected clock, and the old minute boundary admits no burst', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const clock = new ManualClock(START + 30_000);
        const hits = await replay(new MemoryRateLimiter(clock), clock, 'k', s);
        expectNoWindowOverLimit(hits.filter((h) => h.allowed), s.limit);
      }),
      { numRuns: 200 },
    );
    const clock = new ManualClock(START + 59_900);
    const l = new MemoryRateLimiter(clock);
    for (let i = 0; i < 10; i++) expect((await l.hit('k', 10)).allowed).toBe(true);
    clock.set(START + 60_100);
    expect(await l.hit('k', 10)).toMatchObject({ allowed: false, remaining: 0, resetS: 60 });
  });
});

describe('sliding-window rate limits in Redis', () => {
  const redisUrl = inject('redisUrl');
  if (!redisUrl && process.env.CI) throw new Error('Redis required in CI');
  const prefix = `svc-test-rl-${Math.random().toString(36).slice(2, 10)}:`;
  let redis: Redis;
  beforeAll(() => {
    if (redisUrl) redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    // Without Redis the tests below are skipped (and CI fails above): nothing to set up.
    if (redisUrl) {
      const stale = await redis.keys(`${prefix}*`);
      if (stale.length) await redis.del(...stale);
      redis.disconnect();
    }
  });

  it.runIf(Boolean(redisUrl))('decides exactly as the memory limiter does, over random runs', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const key = `parity${run++}`;
        const memClock = new ManualClock(START + 45_000);
        const redisClock = new ManualClock(START + 45_000);
        const mem = await replay(new MemoryRateLimiter(memClock), memClock, key, s);
        const shared = await replay(new RedisRateLimiter(redis, redisClock, redisKeys(prefix)), redisClock, key, s);
        expect(shared).toEqual(mem);
        expectNoWindowOverLimit(shared.filter((h) => h.allowed), s.limit);
      }),
      { numRuns: 25 },
    );
  });

  describe('two app instances sharing Redis, one moved clock', () => {
    const clock = new ManualClock(START + 30_000);
    const apps: { built: BuiltApp; db: Db; redis: Redis }[] = [];
    beforeAll(async () => {
      // Without Redis the tests below are skipped (and CI fails above): nothing to set up.
      if (redisUrl) {
        const first = await freshDb('sqlite');
        for (let i = 0; i < 2; i++) {
          const db = i === 0 ? first.db : await openDb({ dataDir: first.dataDir, databaseUrl: null });
          const r = new Redis(redisUrl);
          const built = await buildApp({ config: testConfig(first.dataDir, { redisPrefix: prefix }), db, clock, redis: r });
          // Booted here, not by the test's first request: under a loaded CI machine the two boots
          // took most of the test's own time limit.
          await built.app.ready();
          apps.push({ built, db, redis: r });
        }
      }
    });
    afterAll(async () => {
      for (const a of apps) {
        await a.built.app.close();
        await a.db.close();
        a.redis.disconnect();
      }
    });

    it.runIf(Boolean(redisUrl))('admit no more than 60 in any 60 s across the old minute boundary, with meaningful headers', async () => {
      const [a, b] = apps;
      const { key } = await a.built.services.keys.create({ name: 'free', plan: 'free', products: ['live'] }, new Date(clock.now()));
      const get = (i: number) => (i % 2 ? a : b).built.app.inject({ url: '/v1/me', headers: auth(key) });
      // 30 at 10:00:30, 30 at 10:00:59.9: the limit, spread over both nodes.
      for (let i = 0; i < 30; i++) expect((await get(i)).statusCode).toBe(200);
      clock.set(START + 59_900);
      let last = await get(0);
      for (let i = 1; i < 30; i++) last = await get(i);
      expect(last.statusCode).toBe(200);
      expect(last.headers).toMatchObject({ 'ratelimit-limit': '60', 'ratelimit-remaining': '0', 'ratelimit-reset': '31' });
      // 10:01:00.1: a new clock minute, and a fixed window would admit 60 more. Not one.
      clock.set(START + 60_100);
      for (let i = 0; i < 4; i++) {
        const refused = await get(i);
        expect(refused.statusCode).toBe(429);
        expect(refused.headers['retry-after']).toBe('30');
        expect(refused.headers['ratelimit-remaining']).toBe('0');
      }
      // 10:01:29.999: the first 30 are still inside the window.
      clock.set(START + 89_999);
      expect((await get(1)).statusCode).toBe(429);
      // 10:01:30: they leave it together; 30 fit, the 31st does not.
      clock.set(START + 90_000);
      for (let i = 0; i < 30; i++) expect((await get(i)).statusCode, `request ${i} at 10:01:30`).toBe(200);
      const over = await get(0);
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toBe('30');
    });
  });
});
