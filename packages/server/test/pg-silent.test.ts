import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Db } from '../src/store/sql/db.js';
import { freshDb, keysOf, tmpDir } from './helpers.js';
import { serveSvc, type SvcProcess } from './process.js';
import { SilentProxy } from './silent-proxy.js';

/**
 * A node cut off from PostgreSQL by a network that drops packets (a proxy of the test's own that
 * stops forwarding and closes nothing), beside a node that still reaches it (docs/operations.md,
 * "Failures and what svc does"): the cut-off node answers 503 store_unavailable in bounded time
 * and keeps /livez up; the game it owned is taken over by the other node once its lease lapses,
 * each play still provisional once and confirmed once; once packets flow again the node serves
 * again, and every acknowledged report is stored.
 */
const ADMIN = 'svc_test_SilentPgSilentPgSilentPg0001';
const procs: SvcProcess[] = [];
const dbs: Db[] = [];
let proxy: SilentProxy | null = null;
afterAll(async () => {
  proxy?.unmute();
  for (const p of procs) await p.stop();
  await proxy?.close();
  for (const d of dbs) await d.close();
});

interface Answer {
  status: number;
  code: string | null;
  ms: number;
}

describe('a node whose database goes silent', () => {
  const pg = inject('pgTemplate');
  const redisUrl = inject('redisUrl');
  if ((!pg || !redisUrl) && process.env.CI) throw new Error('the silent-database test needs PostgreSQL and Redis in CI');

  it.runIf(Boolean(pg && redisUrl))('answers 503 in bounded time; the other node takes its game over with each play once; it heals; nothing acknowledged is lost', { timeout: 180_000 }, async () => {
    const { db, dataDir, databaseUrl } = await freshDb('postgres');
    dbs.push(db);
    if (!databaseUrl || !redisUrl) throw new Error('unreachable');
    const direct = new URL(databaseUrl);
    proxy = await SilentProxy.start(Number(direct.port || 5432));
    const viaProxy = new URL(databaseUrl);
    viaProxy.port = String(proxy.port);
    const env = { SVC_CONSENSUS_LEASE_MS: '1500', SVC_BOOTSTRAP_KEY: ADMIN, SVC_SECRET_KEY: '2b'.repeat(32), SVC_REDIS_URL: redisUrl, SVC_REDIS_PREFIX: `svc-pg-silent-${process.pid}:`, SVC_SIMULATOR: 'off' };
    const cut = await serveSvc(dataDir, { ...env, SVC_DATABASE_URL: viaProxy.toString() });
    procs.push(cut);
    const other = await serveSvc(tmpDir(), { ...env, SVC_DATABASE_URL: databaseUrl });
    procs.push(other);
    const reporters = await keysOf(dataDir, databaseUrl, 3, 'internal', ['report']);
    const games = await (await fetch(`${other.base}/v1/games?date=today&sport=basketball`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
    const game = games.data[3];
    const team = game.competitors[0].entity_id.split(':').pop();
    const acknowledged: string[] = [];
    const report = async (node: SvcProcess, key: string, clock: string): Promise<Answer> => {
      const started = performance.now();
      const res = await fetch(`${node.base}/v1/reports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        // A play of its own per clock: reports seconds apart of one (team, points) are one play.
        body: JSON.stringify({ game_id: game.id, team, points: clock.startsWith('Q1') ? 2 : 3, clock }),
        signal: AbortSignal.timeout(60_000),
      });
      const json = await res.json();
      if (res.status === 202) acknowledged.push(...json.data.map((r: { id: string }) => r.id));
      return { status: res.status, code: json.error?.code ?? null, ms: performance.now() - started };
    };
    const until202 = async (node: SvcProcess, key: string, clock: string): Promise<Answer> => {
      const deadline = Date.now() + 45_000;
      for (;;) {
        const a = await report(node, key, clock);
        if (a.status === 202 || Date.now() > deadline) return a;
        expect(a.status).toBe(503);
        await new Promise((r) => setTimeout(r, 250));
      }
    };

    // The cut-off node owns the game from its first report.
    expect((await report(cut, reporters[0], 'Q1 10:00')).status).toBe(202);

    proxy.mute();
    const refused = await report(cut, reporters[1], 'Q1 10:00');
    const livezStarted = performance.now();
    const livez = await fetch(`${cut.base}/livez`);
    const livezMs = performance.now() - livezStarted;
    console.log(`silent database: the cut-off node answered ${refused.status} ${refused.code} in ${refused.ms.toFixed(0)} ms; /livez ${livez.status} in ${livezMs.toFixed(0)} ms`);
    expect([refused.status, refused.code]).toEqual([503, 'store_unavailable']);
    expect(refused.ms).toBeLessThan(25_000);
    expect(livez.status).toBe(200);
    expect(livezMs).toBeLessThan(1_000);

    // The other node takes the game over once the cut-off node's lease has lapsed, from the store.
    expect((await until202(other, reporters[1], 'Q1 10:00')).status).toBe(202);
    expect((await until202(other, reporters[2], 'Q1 10:00')).status).toBe(202);

    proxy.unmute();
    const healedStarted = Date.now();
    expect((await until202(cut, reporters[0], 'Q2 05:00')).status).toBe(202);
    console.log(`silent database: the cut-off node answered 202 again ${Date.now() - healedStarted} ms after packets flowed`);
    expect((await until202(other, reporters[1], 'Q2 05:00')).status).toBe(202);
    expect((await until202(cut, reporters[2], 'Q2 05:00')).status).toBe(202);

    // Each play once: one provisional and one confirmation; every acknowledged report stored.
    const events = await db.kysely.selectFrom('events').select(['tier', 'clock']).where('game_id', '=', game.id).where('team', '=', team).where('points', 'in', [2, 3]).orderBy('seq').execute();
    expect(events.map((e) => `${e.clock} ${e.tier}`)).toEqual(['Q1 10:00 provisional', 'Q1 10:00 confirmed', 'Q2 05:00 provisional', 'Q2 05:00 confirmed']);
    const stored = await db.kysely.selectFrom('reports').select('id').where('id', 'in', acknowledged).execute();
    expect(stored.length).toBe(acknowledged.length);
  });
});
