import { afterAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { openDb, type Db } from '../src/store/db.js';
import { KeyRepo } from '../src/store/keys.js';
import { freshDb, tmpDir } from './helpers.js';
import { OwnRedis } from './own-redis.js';
import { serveSvc, type SvcProcess } from './process.js';

/**
 * Two `svc serve` nodes on PostgreSQL and a Redis of the test's own, which is then killed
 * (docs/operations.md, "Failures and what svc does"): once a node knows Redis is away, a report
 * for a game another node owns answers 503 `bus_unavailable` with `Retry-After` at once, and one
 * to the owner is answered as usual, neither waiting on ioredis' reconnects or the route deadline
 * (the lease's 1.5 s TTL here + 5 s). When Redis is back, reports are routed again.
 * Bounds carry a margin for a loaded machine; the figures are printed and in docs/operations.md.
 */
const ADMIN = 'svc_test_RedisAwayRedisAwayRedisAway01';
const FAST = { SVC_CONSENSUS_LEASE_MS: '1500', SVC_BOOTSTRAP_KEY: ADMIN, SVC_SECRET_KEY: '6d'.repeat(32) };
const ROUTE_DEADLINE_MS = 1500 + 5 * 1000;

const procs: SvcProcess[] = [];
const dbs: Db[] = [];
let redis: OwnRedis | null = null;
afterAll(async () => {
  for (const p of procs) await p.stop();
  for (const d of dbs) await d.close();
  await redis?.stop();
});

async function reporterKeys(dataDir: string, databaseUrl: string, n: number): Promise<string[]> {
  const db = await openDb({ dataDir, databaseUrl });
  const repo = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await repo.create({ name: `reporter ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key);
  await db.close();
  return keys;
}

interface Answer {
  status: number;
  code: string | null;
  retryAfter: string | null;
  ms: number;
}

async function report(base: string, key: string, body: Record<string, unknown>): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json: unknown = await res.json();
  const code = typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'object' && json.error !== null && 'code' in json.error ? String(json.error.code) : null;
  return { status: res.status, code, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started };
}

async function readyz(base: string): Promise<number> {
  const res = await fetch(`${base}/readyz`);
  await res.arrayBuffer();
  return res.status;
}

describe('Redis known away', () => {
  const pg = inject('pgTemplate');
  if (!pg && process.env.CI) throw new Error('the Redis-away test needs PostgreSQL in CI');

  it.runIf(Boolean(pg))('a report needing Redis is a 503 with Retry-After at once, one to the owner is answered, and routing is back within 30 s of Redis', { timeout: 120_000 }, async () => {
    redis = await OwnRedis.start();
    const { db, dataDir, databaseUrl } = await freshDb('postgres');
    dbs.push(db);
    if (!databaseUrl) throw new Error('unreachable');
    const env = { ...FAST, SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redis.url, SVC_REDIS_PREFIX: `svc-away-${process.pid}:` };
    const owner = await serveSvc(dataDir, env);
    procs.push(owner);
    const other = await serveSvc(tmpDir(), env);
    procs.push(other);
    const reporters = await reporterKeys(dataDir, databaseUrl, 32);
    const res = await fetch(`${owner.base}/v1/games?date=today&sport=basketball`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const game = (await res.json()).data[2];
    const team = game.competitors[0].entity_id.split(':').pop();
    let points = 0;
    const play = () => ({ game_id: game.id, team, points: (points++ % 3) + 1, clock: `Q1 ${10 + Math.floor(points / 3)}:00` });

    // The owner takes the game with the first report; the other node routes to it over Redis.
    expect((await report(owner.base, reporters[0], play())).status).toBe(202);
    expect((await report(other.base, reporters[1], play())).status).toBe(202);

    await redis.stop();
    // Both nodes know: their connection closed, /readyz says so.
    const deadline = Date.now() + 15_000;
    while ((await readyz(owner.base)) !== 503 || (await readyz(other.base)) !== 503) {
      if (Date.now() > deadline) throw new Error('/readyz did not notice Redis going away');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Four at a time to each node, three rounds.
    const toOwner: Answer[] = [];
    const toOther: Answer[] = [];
    for (let round = 0; round < 3; round++) {
      const batch = await Promise.all(
        [0, 1, 2, 3].flatMap((i) => [
          report(owner.base, reporters[2 + round * 8 + i], play()).then((a) => toOwner.push(a)),
          report(other.base, reporters[6 + round * 8 + i], play()).then((a) => toOther.push(a)),
        ]),
      );
      expect(batch).toHaveLength(8);
    }
    const worst = (answers: Answer[]) => Math.max(...answers.map((a) => a.ms));
    console.log(`Redis away: owner 202 in ≤ ${worst(toOwner).toFixed(0)} ms, other node 503 in ≤ ${worst(toOther).toFixed(0)} ms (12 each)`);
    expect(toOwner.map((a) => a.status)).toEqual(Array(12).fill(202));
    expect(toOther.map((a) => [a.status, a.code, a.retryAfter])).toEqual(Array(12).fill([503, 'bus_unavailable', '1']));
    // 1 s is the promise; a loaded test machine gets a margin, and none may wait for the route deadline.
    expect(worst(toOwner)).toBeLessThan(2_500);
    expect(worst(toOther)).toBeLessThan(2_500);
    expect(worst(toOther)).toBeLessThan(ROUTE_DEADLINE_MS / 2);

    await redis.resume();
    const back = Date.now();
    let routed: Answer | null = null;
    let i = 0;
    while (Date.now() - back < 30_000) {
      const a = await report(other.base, reporters[i++ % reporters.length], play());
      if (a.status === 202) {
        routed = a;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`Redis back: the other node routed again after ${Date.now() - back} ms`);
    expect(routed?.status).toBe(202);
  });
});
