import crypto from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { freshDb, tmpDir } from './helpers.js';
import { seededDataDir, serveSvc, startSvc, type SvcProcess } from './process.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { connect, type Frame, type StreamClient } from './ws-client.js';

/**
 * Sandbox replays in real `svc serve` processes (docs/replays.md): the 2022 World Cup final at
 * 600× (about 15 s) reaches its key's stream and webhook receiver as six provisional and six
 * confirmed goals in the source's order, and nothing of it reaches another key; a replay survives
 * a SIGKILL of its node, on one SQLite node restarted and on two PostgreSQL nodes with Redis.
 */
const FINAL = 'soccer_21728';
const GOALS = ['ARG', 'ARG', 'FRA', 'FRA', 'ARG', 'FRA'];
const FAST = { SVC_CONSENSUS_LEASE_MS: '1500', SVC_WEBHOOK_ALLOW_PRIVATE: 'true' };

const procs: SvcProcess[] = [];
const clients: StreamClient[] = [];
const receivers: Receiver[] = [];
const dbs: Db[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const p of procs) await p.stop();
  for (const r of receivers) await r.close();
  for (const d of dbs) await d.close();
});

/** Two sandbox keys with the live product, made in the store before the service starts. */
async function keys(dataDir: string, databaseUrl: string | null): Promise<{ owner: string; other: string }> {
  const db = await openDb({ dataDir, databaseUrl });
  const repo = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
  const make = async (name: string) => (await repo.create({ name, plan: 'internal', products: ['live'], sports: null, leagues: null }, new Date())).key;
  const out = { owner: await make('replay owner'), other: await make('another key') };
  await db.close();
  return out;
}

async function api<T = Record<string, unknown>>(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

interface ReplayJson {
  id: string;
  game_id: string;
  status: string;
}

async function startReplay(base: string, key: string, speed = 600): Promise<ReplayJson> {
  const res = await api<{ data: ReplayJson }>(base, key, 'POST', '/v1/replays', { game_id: FINAL, speed });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function untilStatus(base: string, key: string, id: string, status: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api<{ data: ReplayJson }>(base, key, 'GET', `/v1/replays/${id}`);
    if (r.body.data?.status === status) return;
    if (Date.now() > deadline) throw new Error(`replay ${id} is ${r.body.data?.status}, not ${status}, after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** A game's scoring frames as (tier, team) in arrival order. */
const scores = (frames: Frame[], gameId: string) => frames.filter((f) => f.type === 'score' && f.game_id === gameId).map((f) => `${String(f.tier)}:${String(f.team)}`);
const provisionalThenConfirmed = GOALS.flatMap((t) => [`provisional:${t}`, `confirmed:${t}`]);

async function expectFinal33(base: string, key: string, gameId: string): Promise<void> {
  const game = (await api<{ data: { status: string; competitors: { score: number }[] } }>(base, key, 'GET', `/v1/games/${gameId}`)).body.data;
  expect(game.status).toBe('final');
  expect(game.competitors.map((c) => c.score)).toEqual([3, 3]);
  const confirmed = (await api<{ data: { team: string; tier: string }[] }>(base, key, 'GET', `/v1/games/${gameId}/events`)).body.data;
  expect(confirmed.map((e) => e.team)).toEqual(GOALS);
}

describe('sandbox replays in real processes', () => {
  it('one node: the 2022 final at 600× reaches its key’s stream and webhook receiver, six provisional and six confirmed goals in order; another key gets nothing', async () => {
    const dataDir = seededDataDir();
    const { owner, other } = await keys(dataDir, null);
    const svc = await serveSvc(dataDir, FAST);
    procs.push(svc);
    const ws = svc.base.replace('http', 'ws');
    const mine = await startReceiver();
    const theirs = await startReceiver();
    receivers.push(mine, theirs);
    const hook = await api<{ data: { secret: string } }>(svc.base, owner, 'POST', '/v1/webhooks', { url: `${mine.url}/`, tier: 'confirmed' });
    expect(hook.status).toBe(201);
    expect((await api(svc.base, other, 'POST', '/v1/webhooks', { url: `${theirs.url}/`, tier: 'confirmed' })).status).toBe(201);
    const ownerStream = await connect(`${ws}/v1/stream`, owner);
    const otherStream = await connect(`${ws}/v1/stream`, other);
    clients.push(ownerStream, otherStream);
    // When each provisional goal arrives: the gaps are the source's divided by the speed.
    const arrivals: { game: string; at: number }[] = [];
    ownerStream.ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as Frame;
      if (f.type === 'score' && f.tier === 'provisional') arrivals.push({ game: String(f.game_id), at: Date.now() });
    });

    const replay = await startReplay(svc.base, owner);
    // At the same time, `svc replay` of the same game with the same key: a second replay, its own game.
    const cli = startSvc(['replay', FINAL, '--speed', '600', '--json', '--url', svc.base, '--key', owner], { SVC_DATA_DIR: dataDir });
    procs.push(cli);
    await ownerStream.until((c) => scores(c.frames, replay.game_id).length === 12, 60_000, 'twelve score frames');
    expect(scores(ownerStream.frames, replay.game_id)).toEqual(provisionalThenConfirmed);
    for (const f of ownerStream.frames.filter((x) => x.type === 'score' && x.game_id === replay.game_id)) {
      expect(f).toMatchObject({ schema: 'svc.event.v1', points: 1 });
      if (f.tier === 'confirmed') expect(f).toMatchObject({ confidence: { agreement: 1, reporters: 3 } });
    }
    await untilStatus(svc.base, owner, replay.id, 'finished');
    await expectFinal33(svc.base, owner, replay.game_id);
    // Source goals at 15:23, 15:36, 16:35, 16:36, 17:08, 17:18: 13, 59, 1, 32 and 10 minutes apart, at 600× 1.3, 5.9, 0.1, 3.2 and 1.0 s.
    const at = arrivals.filter((a) => a.game === replay.game_id).map((a) => a.at);
    const gaps = at.slice(1).map((t, i) => (t - at[i]) / 1000);
    [1.3, 5.9, 0.1, 3.2, 1.0].forEach((expected, i) => expect(Math.abs(gaps[i] - expected), `gap ${i + 1}: ${gaps.join(', ')}`).toBeLessThan(0.6));

    // The owner's receiver: the six confirmed goals, signed with the endpoint's secret, as events of the replay's game.
    // `svc replay` printed its own replay's twelve events, then exited 0 when it finished.
    const started = await cli.line('stderr', /svc replay: (rpl_\w+) replays soccer_21728 as (soccer_\d+) at 600×/);
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    const printed = cli.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Frame);
    expect(started[2]).not.toBe(replay.game_id);
    expect(printed.every((e) => e.game_id === started[2])).toBe(true);
    expect(scores(printed, started[2])).toEqual(provisionalThenConfirmed);
    expect(cli.stderr.join('\n')).toMatch(new RegExp(`svc replay: ${started[1]} finished`));

    await mine.waitFor((r) => r.requests.length >= 12, 30_000, 'twelve deliveries (two replays)');
    const delivered = mine.requests
      .map((q) => {
        const sig = String(q.headers['x-svc-signature']);
        expect(verifySignature(sig, q.body, hook.body.data.secret).ok).toBe(true);
        return JSON.parse(q.body) as { id: string; game_id: string; team: string; tier: string; schema: string };
      })
      .filter((e) => e.game_id === replay.game_id);
    expect(delivered).toHaveLength(6);
    const bySeq = [...delivered].sort((a, b) => a.id.localeCompare(b.id));
    expect(bySeq.map((e) => e.team)).toEqual(GOALS);
    for (const e of delivered) expect(e).toMatchObject({ game_id: replay.game_id, tier: 'confirmed', schema: 'svc.event.v1' });

    // Another key: no frame, no delivery, no game.
    await new Promise((r) => setTimeout(r, 1000));
    expect(otherStream.frames.filter((f) => f.game_id === replay.game_id)).toEqual([]);
    expect(otherStream.events()).toEqual([]);
    expect(theirs.requests).toEqual([]);
    expect((await api(svc.base, other, 'GET', `/v1/games/${replay.game_id}`)).status).toBe(404);
    expect((await api(svc.base, other, 'GET', `/v1/games/${replay.game_id}/events`)).status).toBe(404);
    // Nor on resume: a stream reconnecting from before the replay with `since` replays nothing of it.
    const resumed = await connect(`${ws}/v1/stream?since=evt_000000000001`, other);
    clients.push(resumed);
    await new Promise((r) => setTimeout(r, 500));
    expect(resumed.frames.filter((f) => f.game_id === replay.game_id)).toEqual([]);
  }, 120_000);

  it('one SQLite node killed mid-replay and restarted: the replay resumes and every goal is confirmed once, in order', async () => {
    const dataDir = seededDataDir();
    const { owner } = await keys(dataDir, null);
    const first = await serveSvc(dataDir, FAST);
    procs.push(first);
    const replay = await startReplay(first.base, owner);
    // Until the second goal is in (about 4 s at 600×), then a hard crash.
    const deadline = Date.now() + 30_000;
    while ((await api<{ data: unknown[] }>(first.base, owner, 'GET', `/v1/games/${replay.game_id}/events`)).body.data.length < 2) {
      if (Date.now() > deadline) throw new Error('no second goal');
      await new Promise((r) => setTimeout(r, 100));
    }
    await first.kill();
    const again = await serveSvc(dataDir, FAST);
    procs.push(again);
    await untilStatus(again.base, owner, replay.id, 'finished');
    await expectFinal33(again.base, owner, replay.game_id);
    const plays = (await api<{ data: { event_type: string }[] }>(again.base, owner, 'GET', `/v1/competitions/${replay.game_id.replace('soccer_', 'soccer_wc_')}/plays`)).body.data;
    expect(plays.map((p) => p.event_type)).toEqual(['kickoff', 'penalty_goal', 'goal', 'penalty_goal', 'goal', 'goal', 'penalty_goal', 'shootout', 'final']);
  }, 120_000);

  const pg = inject('pgTemplate');
  const redisUrl = inject('redisUrl');
  it.runIf(Boolean(pg && redisUrl))('two PostgreSQL nodes with Redis: one drives, the other streams it; the driver killed, the other takes over', async () => {
    const { db, dataDir, databaseUrl } = await freshDb('postgres');
    dbs.push(db);
    if (!databaseUrl || !redisUrl) throw new Error('unreachable');
    const { owner, other } = await keys(dataDir, databaseUrl);
    const env = {
      ...FAST,
      SVC_DATABASE_URL: databaseUrl,
      SVC_REDIS_URL: redisUrl,
      SVC_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      // Its own channel: other runs' nodes on this Redis must not reach these streams.
      SVC_REDIS_PREFIX: `svc-replays-${crypto.randomBytes(4).toString('hex')}:`,
    };
    const a = await serveSvc(dataDir, env);
    procs.push(a);
    const b = await serveSvc(tmpDir(), env);
    procs.push(b);
    const wsB = b.base.replace('http', 'ws');
    const ownerOnB = await connect(`${wsB}/v1/stream`, owner);
    const otherOnB = await connect(`${wsB}/v1/stream`, other);
    clients.push(ownerOnB, otherOnB);

    const replay = await startReplay(a.base, owner);
    // Node A took the POST and drives; B's stream delivers what A publishes.
    await ownerOnB.until((c) => scores(c.frames, replay.game_id).length >= 4, 30_000, 'two goals on node B');
    const driver = await db.kysely.selectFrom('replays').select(['driver']).where('id', '=', replay.id).executeTakeFirstOrThrow();
    expect(driver.driver).not.toBeNull();
    await a.kill();
    // A's claim lapses; B's tick takes the replay over where it was.
    await untilStatus(b.base, owner, replay.id, 'finished', 90_000);
    await ownerOnB.until((c) => scores(c.frames, replay.game_id).length >= 12, 20_000, 'every goal on node B').catch((err: unknown) => {
      // Which goal's frame is missing tells a lost bus message from a play driven twice or never.
      throw new Error(`${String(err)}; the game's score frames on B: ${JSON.stringify(scores(ownerOnB.frames, replay.game_id))}`);
    });
    expect(scores(ownerOnB.frames, replay.game_id)).toEqual(provisionalThenConfirmed);
    await expectFinal33(b.base, owner, replay.game_id);
    expect(otherOnB.events()).toEqual([]);
  }, 150_000);
});
