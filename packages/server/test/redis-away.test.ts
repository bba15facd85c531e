import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Db } from '../src/store/sql/db.js';
import { freshDb, keysOf, tmpDir } from './helpers.js';
import { OwnRedis } from './own-redis.js';
import { SilentProxy } from './silent-proxy.js';
import { connect } from './ws-client.js';
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
const redisAlso: OwnRedis[] = [];
const proxies: SilentProxy[] = [];
afterAll(async () => {
  for (const p of procs) await p.stop();
  for (const d of dbs) await d.close();
  for (const x of proxies) await x.close();
  await redis?.stop();
  for (const r of redisAlso) await r.stop();
});


const reporterKeys = (dataDir: string, databaseUrl: string, n: number) => keysOf(dataDir, databaseUrl, n, 'internal', ['report']);

interface Answer {
  status: number;
  code: string | null;
  retryAfter: string | null;
  ms: number;
}

/** The ids of the reports each node acknowledged (202), by its base URL: all of them must be stored. */
const acknowledged = new Map<string, string[]>();

async function report(base: string, key: string, body: Record<string, unknown>): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json: unknown = await res.json();
  if (res.status === 202 && typeof json === 'object' && json !== null && 'data' in json && Array.isArray(json.data)) {
    const ids = acknowledged.get(base) ?? [];
    for (const r of json.data) if (typeof r === 'object' && r !== null && 'id' in r && typeof r.id === 'string') ids.push(r.id);
    acknowledged.set(base, ids);
  }
  const code = typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'object' && json.error !== null && 'code' in json.error ? String(json.error.code) : null;
  return { status: res.status, code, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started };
}

async function readyz(base: string): Promise<number> {
  const res = await fetch(`${base}/readyz`);
  await res.arrayBuffer();
  return res.status;
}

interface Cluster {
  db: Db;
  owner: SvcProcess;
  other: SvcProcess;
  dataDir: string;
  databaseUrl: string;
  reporters: string[];
  play: () => Record<string, unknown>;
}

/** Two nodes on a fresh PostgreSQL database and the given Redis, reporter keys, and plays on one of today's games. */
async function cluster(redisUrl: string, prefix: string): Promise<Cluster> {
  const { db, dataDir, databaseUrl } = await freshDb('postgres');
  dbs.push(db);
  if (!databaseUrl) throw new Error('unreachable');
  const env = { ...FAST, SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redisUrl, SVC_REDIS_PREFIX: `${prefix}-${process.pid}:` };
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
  return { db, owner, other, dataDir, databaseUrl, reporters, play };
}

describe('Redis known away', () => {
  const pg = inject('pgTemplate');
  if (!pg && process.env.CI) throw new Error('the Redis-away test needs PostgreSQL in CI');

  it.runIf(Boolean(pg))('a report needing Redis is a 503 with Retry-After at once, one to the owner is answered, and routing is back within 30 s of Redis', { timeout: 120_000 }, async () => {
    redis = await OwnRedis.start();
    const c = await cluster(redis.url, 'svc-away');
    const { owner, other, reporters, play } = c;

    // The owner takes the game with the first report; the other node routes to it over Redis
    // (once its subscription is up: a node just started may answer 503 for a moment).
    expect((await report(owner.base, reporters[0], play())).status).toBe(202);
    await untilRouted(other, reporters, play);

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
    const routedAfter = await untilRouted(other, reporters, play);
    console.log(`Redis back: the other node routed again after ${routedAfter} ms`);
    await expectAllStored(c);
  });

  it.runIf(Boolean(pg))('a Redis gone silent (packets dropped, nothing closed) is found within seconds; then nothing waits on it; it heals when packets flow', { timeout: 120_000 }, async () => {
    const own = await OwnRedis.start();
    redisAlso.push(own);
    const proxy = await SilentProxy.start(own.port);
    proxies.push(proxy);
    const c = await cluster(`redis://127.0.0.1:${proxy.port}`, 'svc-silent');
    const { owner, other, dataDir, databaseUrl, reporters, play } = c;
    const [metered] = await keysOf(dataDir, databaseUrl, 1, 'pro', ['live']);
    const me = async (base: string): Promise<Answer> => {
      const started = performance.now();
      const res = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${metered}` } });
      await res.arrayBuffer();
      return { status: res.status, code: null, retryAfter: null, ms: performance.now() - started };
    };
    expect((await report(owner.base, reporters[0], play())).status).toBe(202);
    await untilRouted(other, reporters, play);
    expect((await me(owner.base)).status).toBe(200);

    proxy.mute();
    // The first calls may wait for a command's timeout (3 s): bounded, never a hang.
    const first = await Promise.all([report(owner.base, reporters[2], play()), report(other.base, reporters[3], play()), me(owner.base), me(other.base)]);
    console.log(`Redis silent, first calls: ${first.map((a) => `${a.status} in ${a.ms.toFixed(0)} ms`).join(', ')}`);
    for (const a of first) expect(a.ms).toBeLessThan(10_000);
    expect(first.slice(2).map((a) => a.status)).toEqual([200, 200]);
    for (const a of first.slice(0, 2)) expect([202, 503]).toContain(a.status);
    // The owner answers its reporter once the events are stored, without waiting for Redis to
    // acknowledge them (it waited for the publish command's 3 s timeout).
    expect(first[0].status).toBe(202);
    expect(first[0].ms).toBeLessThan(2_000);
    // Found silent by the heartbeat (a PING every 2 s, given 5 s): from then on nothing waits on it.
    await new Promise((r) => setTimeout(r, 8_000));
    const later = await Promise.all([report(owner.base, reporters[4], play()), report(other.base, reporters[5], play()), me(owner.base), me(other.base)]);
    console.log(`Redis silent, found: ${later.map((a) => `${a.status} ${a.code ?? ''} in ${a.ms.toFixed(0)} ms`).join(', ')}`);
    // Whichever node holds the game now (a report held up above may have let its 1.5 s lease lapse
    // to the other node) answers 202; the other cannot reach it and says so.
    expect(later.slice(0, 2).map((a) => `${a.status} ${a.code}`).sort()).toEqual(['202 null', '503 bus_unavailable']);
    expect(later.slice(2).map((a) => a.status)).toEqual([200, 200]);
    for (const a of later) expect(a.ms).toBeLessThan(2_500);
    const livez = performance.now();
    expect((await fetch(`${other.base}/livez`)).status).toBe(200);
    expect(performance.now() - livez).toBeLessThan(1_000);

    proxy.unmute();
    const routedAfter = await untilRouted(later[0].status === 503 ? owner : other, reporters, play);
    console.log(`Redis answering again: the other node routed again after ${routedAfter} ms`);
    await expectAllStored(c);
  });

  it.runIf(Boolean(pg))('a Redis restarted empty: no node errors, stream connections are counted again by the nodes that hold them, reports are routed', { timeout: 120_000 }, async () => {
    const own = await OwnRedis.start();
    redisAlso.push(own);
    const c = await cluster(own.url, 'svc-empty');
    const { owner, other, dataDir, databaseUrl, reporters, play } = c;
    const [free] = await keysOf(dataDir, databaseUrl, 1, 'free', ['live']);
    const ws = (base: string) => base.replace('http://', 'ws://');
    // The free plan's two stream connections, one on each node.
    const held = [await connect(`${ws(owner.base)}/v1/stream`, free), await connect(`${ws(other.base)}/v1/stream`, free)];
    for (const c of held) await c.until((x) => x.frames.length > 0, 5_000, 'subscribed');

    await own.stop();
    await own.resume();
    // Every slot a node holds is put back within a third of the slots' TTL (10 s).
    await new Promise((r) => setTimeout(r, 12_000));
    const third = await connect(`${ws(other.base)}/v1/stream`, free);
    await third.until((c) => c.closeCode !== null, 10_000, 'the third connection refused');
    expect(third.closeCode).toBe(4029);
    for (const c of held) expect(c.closeCode).toBeNull();
    for (const c of held) c.close();

    const routedAfter = await untilRouted(other, reporters, play);
    expect(routedAfter).toBeLessThan(30_000);
    expect((await report(owner.base, reporters[0], play())).status).toBe(202);
    for (const p of [owner, other]) {
      expect(p.child.exitCode).toBeNull();
      expect(p.stderr.join('\n') + p.stdout.join('\n')).not.toMatch(/"level":(50|60)/);
    }
    await expectAllStored(c);
  });
});

/** Every report either node acknowledged is in the database. */
async function expectAllStored(c: Cluster): Promise<void> {
  const ids = [...(acknowledged.get(c.owner.base) ?? []), ...(acknowledged.get(c.other.base) ?? [])];
  expect(ids.length).toBeGreaterThan(0);
  const stored = await c.db.kysely.selectFrom('reports').select('id').where('id', 'in', ids).execute();
  console.log(`acknowledged ${ids.length} reports, stored ${stored.length}`);
  expect(stored.length).toBe(ids.length);
}

/** Reports to the node that does not own the game until one is routed (202); the ms it took. */
async function untilRouted(node: SvcProcess, reporters: string[], play: () => Record<string, unknown>): Promise<number> {
  const started = Date.now();
  let i = 0;
  const seen = new Map<string, number>();
  while (Date.now() - started < 30_000) {
    const answer = await report(node.base, reporters[i++ % reporters.length], play());
    if (answer.status === 202) return Date.now() - started;
    const what = `${answer.status} ${answer.code ?? ''}`;
    seen.set(what, (seen.get(what) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no report was routed within 30 s; answers: ${[...seen].map(([k, n]) => `${n} × ${k}`).join(', ')}`);
}
