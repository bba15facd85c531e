import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { freshDb, tmpDir } from './helpers.js';
import { serveSvc, type SvcProcess } from './process.js';
import { connect, type Frame, type StreamClient } from './ws-client.js';

/**
 * Hard crashes of real `svc serve` processes (docs/consensus.md, "Cluster"): a provisional
 * published before a SIGKILL is still confirmed or retracted exactly once, by the node that took
 * the game over or by the same node restarted. Leases and retractions are shortened by config so
 * this takes seconds.
 */
const ADMIN = 'svc_test_CrashCrashCrashCrashCrash0001';
const FAST = { SVC_CONSENSUS_LEASE_MS: '1500', SVC_CONSENSUS_RETRACT_MS: '4000', SVC_BOOTSTRAP_KEY: ADMIN };
const CLUSTER_SECRET_KEY = '5e'.repeat(32);

const procs: SvcProcess[] = [];
const clients: StreamClient[] = [];
const dbs: Db[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const p of procs) await p.stop();
  for (const d of dbs) await d.close();
});

async function reporterKeys(dataDir: string, databaseUrl: string | null, n: number): Promise<string[]> {
  const db = await openDb({ dataDir, databaseUrl });
  const repo = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await repo.create({ name: `reporter ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key);
  await db.close();
  return keys;
}

async function todaysGame(base: string): Promise<{ id: string; home: string; away: string }> {
  const res = await fetch(`${base}/v1/games?date=today&sport=basketball`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const game = (await res.json()).data[2];
  const [home, away] = game.competitors.map((c: { entity_id: string }) => c.entity_id.split(':').pop());
  return { id: game.id, home, away };
}

async function report(base: string, key: string, body: Record<string, unknown>): Promise<{ event_id: string | null; tier: string }> {
  const res = await fetch(`${base}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return (await res.json()).data[0];
}

const resolutionsOf = (frames: Frame[], provisionalId: string) =>
  frames.filter((f) => (f.type === 'score' && f.tier === 'confirmed' && f.provisional_id === provisionalId) || (f.type === 'score_retracted' && f.retracted_id === provisionalId));

/**
 * Confirmations and retractions of a provisional as stored. The two-node tests read them from the
 * store, not from a stream: their processes publish on Redis's default channel, which every svc
 * on this Redis shares (other test runs too), and foreign events there could disturb a client.
 */
async function storedResolutions(db: Db, provisionalId: string): Promise<{ type: string; tier: string; reporters: number }[]> {
  return db.kysely
    .selectFrom('events')
    .select(['type', 'tier', 'reporters'])
    .where((eb) => eb.or([eb.and([eb('tier', '=', 'confirmed'), eb('provisional_id', '=', provisionalId)]), eb.and([eb('type', '=', 'score_retracted'), eb('retracted_id', '=', provisionalId)])]))
    .execute();
}

async function untilResolved(db: Db, provisionalId: string): Promise<void> {
  const deadline = Date.now() + 100_000;
  while ((await storedResolutions(db, provisionalId)).length === 0) {
    if (Date.now() > deadline) throw new Error(`no resolution of ${provisionalId} within 100 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits for `marker` on the stream: events come in order, so nothing posted before it can follow. */
async function settle(client: StreamClient, marker: string | null): Promise<void> {
  await client.until((c) => c.events().some((e) => e.id === marker), 20_000, 'the marker event');
}

describe('a hard crash leaves no provisional unresolved', () => {
  const pg = inject('pgTemplate');
  const redisUrl = inject('redisUrl');
  const cluster = Boolean(pg && redisUrl);
  if (!cluster && process.env.CI) throw new Error('crash tests need PostgreSQL and Redis in CI');

  it.runIf(cluster)('two nodes: after a SIGKILL of the owner mid-play, the other node confirms the play once', async () => {
    const { db, dataDir, databaseUrl } = await freshDb('postgres');
    dbs.push(db);
    if (!databaseUrl || !redisUrl) throw new Error('unreachable');
    // Nodes of one cluster share the deployment key (docs/operations.md "Secrets at rest").
    const env = { ...FAST, SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redisUrl, SVC_SECRET_KEY: CLUSTER_SECRET_KEY };
    const a = await serveSvc(dataDir, env);
    procs.push(a);
    const b = await serveSvc(tmpDir(), env);
    procs.push(b);
    const reporters = await reporterKeys(dataDir, databaseUrl, 3);
    const game = await todaysGame(a.base);
    const play = { game_id: game.id, team: game.home, points: 2 };
    const first = await report(a.base, reporters[0], play);
    const second = await report(b.base, reporters[1], play);
    expect(second.event_id).toBe(first.event_id);
    if (!first.event_id) throw new Error('no provisional');
    await a.kill();
    // Node B waits out A's lease, rebuilds the play's two votes from the store and adds the third.
    const third = await report(b.base, reporters[2], play);
    expect(third.tier).toBe('confirmed');
    expect(await storedResolutions(db, first.event_id)).toEqual([{ type: 'score', tier: 'confirmed', reporters: 3 }]);
    const events = await db.kysely.selectFrom('events').select(['tier']).where('game_id', '=', game.id).where('team', '=', game.home).where('points', '=', 2).execute();
    expect(events.map((e) => e.tier)).toEqual(['provisional', 'confirmed']);
  }, 120_000);

  it.runIf(cluster)('two nodes: a provisional left open by a SIGKILLed owner is retracted once by the other node, with no new report', async () => {
    const { db, dataDir, databaseUrl } = await freshDb('postgres');
    dbs.push(db);
    if (!databaseUrl || !redisUrl) throw new Error('unreachable');
    // Nodes of one cluster share the deployment key (docs/operations.md "Secrets at rest").
    const env = { ...FAST, SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redisUrl, SVC_SECRET_KEY: CLUSTER_SECRET_KEY };
    const a = await serveSvc(dataDir, env);
    procs.push(a);
    const b = await serveSvc(tmpDir(), env);
    procs.push(b);
    const [reporter] = await reporterKeys(dataDir, databaseUrl, 1);
    const game = await todaysGame(a.base);
    const first = await report(a.base, reporter, { game_id: game.id, team: game.home, points: 3 });
    if (!first.event_id) throw new Error('no provisional');
    await a.kill();
    await untilResolved(db, first.event_id);
    // One tick more of node B's, and a new play it handles end to end: still one resolution.
    const marker = await report(b.base, reporter, { game_id: game.id, team: game.away, points: 1 });
    expect(marker.event_id).not.toBeNull();
    expect((await storedResolutions(db, first.event_id)).map((r) => r.type)).toEqual(['score_retracted']);
  }, 120_000);

  it('one SQLite node: SIGKILL and restart, then the open provisional is retracted once', async () => {
    const dataDir = tmpDir();
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    const [reporter] = await reporterKeys(dataDir, null, 1);
    const first = await serveSvc(dataDir, FAST);
    procs.push(first);
    const game = await todaysGame(first.base);
    const opened = await report(first.base, reporter, { game_id: game.id, team: game.away, points: 2 });
    if (!opened.event_id) throw new Error('no provisional');
    const provisional = opened.event_id;
    await first.kill();
    const again = await serveSvc(dataDir, FAST);
    procs.push(again);
    // Resume from the provisional: the retraction may come before the stream connects.
    const client = await connect(`${again.base.replace('http', 'ws')}/v1/stream?game=${game.id}&since=${provisional}`, ADMIN);
    clients.push(client);
    await client.until((c) => resolutionsOf(c.frames, provisional).length > 0, 100_000, 'the retraction');
    const marker = await report(again.base, reporter, { game_id: game.id, team: game.home, points: 1 });
    await settle(client, marker.event_id);
    expect(resolutionsOf(client.frames, provisional).map((f) => f.type)).toEqual(['score_retracted']);
  }, 120_000);
});
