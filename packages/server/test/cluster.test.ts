import { systemClock } from '../src/domain/clock.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Redis } from 'ioredis';
import { buildApp, type BuiltApp } from '../src/app.js';
import { RedisBus } from '../src/bus/redis-bus.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { auth, freshDb, testConfig } from './helpers.js';
import { badHandshake, connect, type StreamClient } from './ws-client.js';

/** Two nodes on one PostgreSQL database and one Redis, as in cluster mode. */
describe('cluster mode: two nodes, one PostgreSQL, one Redis', () => {
  const redisUrl = inject('redisUrl');
  const pgTemplate = inject('pgTemplate');
  const available = Boolean(redisUrl && pgTemplate);
  if (!available && process.env.CI) throw new Error('cluster tests need PostgreSQL and Redis in CI');

  const nodes: { built: BuiltApp; db: Db; redis: Redis; bus: RedisBus; ws: string; http: string }[] = [];
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    if (!available || !redisUrl) return;
    const first = await freshDb('postgres');
    for (let i = 0; i < 2; i++) {
      const db = i === 0 ? first.db : await openDb({ dataDir: first.dataDir, databaseUrl: first.databaseUrl, poolSize: 5 });
      const redis = new Redis(redisUrl);
      // A prefix of its own: other test runs share this Redis (docs/operations.md).
      const prefix = `svc-test:${first.databaseUrl?.split('/').pop() ?? ''}:`;
      const bus = new RedisBus(redis, redis.duplicate(), redisKeys(prefix));
      await bus.whenReady();
      const built = await buildApp({ config: testConfig(first.dataDir, { databaseUrl: first.databaseUrl, redisPrefix: prefix }), db, clock: systemClock, redis, bus });
      await built.app.listen({ port: 0, host: '127.0.0.1' });
      const addr = built.app.server.address();
      if (!addr || typeof addr === 'string') throw new Error('no address');
      nodes.push({ built, db, redis, bus, ws: `ws://127.0.0.1:${addr.port}`, http: `http://127.0.0.1:${addr.port}` });
    }
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const n of nodes) {
      await n.built.app.close();
      await n.bus.close();
      await n.db.close();
      n.redis.disconnect();
    }
  });

  it.runIf(available)('counts a key\'s concurrent exports across the nodes: one held on node A is the free plan\'s one, so node B answers 429 too_many_exports until it ends', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'exports', plan: 'free', products: ['archive'] }, new Date());
    const keyId: string = (await (await fetch(`${a.http}/v1/me`, { headers: auth(key) })).json()).data.id;
    const exportOn = (node: (typeof nodes)[number]) => fetch(`${node.http}/v1/export?league=wc&season=2022&entity=competitions`, { headers: auth(key) });
    // Node A's export in progress holds the key's slot in Redis, as its route does.
    const held = await a.built.services.exportSlots.acquire(keyId, 1);
    expect(held).not.toBeNull();
    const refused = await exportOn(b);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await refused.json()).error).toMatchObject({ type: 'rate_limit_error', code: 'too_many_exports' });
    if (held !== null) await a.built.services.exportSlots.release(keyId, held);
    const served = await exportOn(b);
    expect(served.status).toBe(200);
    expect((await served.text()).split('\n').length).toBeGreaterThan(50);
    // And the slot B took is given back when its export ends: A may export again.
    let again = await exportOn(a);
    for (let i = 0; i < 50 && again.status === 429; i++) {
      await again.arrayBuffer();
      await new Promise((r) => setTimeout(r, 20));
      again = await exportOn(a);
    }
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  });

  it.runIf(available)('a report posted to node A reaches a stream client on node B', async () => {
    const [a, b] = nodes;
    const { key: admin } = await a.built.services.keys.create({ name: 'c', plan: 'internal', products: ['live', 'report'] }, new Date());
    const games = (await (await fetch(`${a.http}/v1/games?date=today&sport=basketball`, { headers: auth(admin) })).json()).data;
    const game = games[0];
    const onB = await connect(`${b.ws}/v1/stream?game=${game.id}`, admin);
    clients.push(onB);
    await onB.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    const res = await fetch(`${a.http}/v1/reports`, {
      method: 'POST',
      headers: { ...auth(admin), 'content-type': 'application/json' },
      body: JSON.stringify({ game_id: game.id, team: game.competitors[0].entity_id.split(':').pop(), points: 2 }),
    });
    expect(res.status).toBe(202);
    const { data } = await res.json();
    await onB.until((c) => c.events().length === 1, 5000, 'event on node B');
    expect(onB.events()[0]).toMatchObject({ id: data[0].event_id, tier: 'provisional', game_id: game.id, points: 2 });
    // Node B reads the same store: the key made on A authenticates there too.
    expect((await fetch(`${b.http}/v1/me`, { headers: auth(admin) })).status).toBe(200);
  });

  it.runIf(available)('reports of one play alternating between the nodes make one provisional and one confirmation, seen on both', async () => {
    const [a, b] = nodes;
    const { key: admin } = await a.built.services.keys.create({ name: 'watch', plan: 'internal', products: ['live', 'report'] }, new Date());
    const reporters = await Promise.all([1, 2, 3].map(async (i) => (await a.built.services.keys.create({ name: `r${i}`, plan: 'internal', products: ['report'] }, new Date())).key));
    const games = (await (await fetch(`${a.http}/v1/games?date=today&sport=basketball`, { headers: auth(admin) })).json()).data;
    const game = games[1];
    const [home, away] = game.competitors.map((c: { entity_id: string }) => c.entity_id.split(':').pop());
    const watchers = [await connect(`${a.ws}/v1/stream?game=${game.id}`, admin), await connect(`${b.ws}/v1/stream?game=${game.id}`, admin)];
    clients.push(...watchers);
    for (const w of watchers) await w.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    const post = async (node: (typeof nodes)[number], key: string, team: string) => {
      const res = await fetch(`${node.http}/v1/reports`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify({ game_id: game.id, team, points: 3 }) });
      expect(res.status).toBe(202);
      return (await res.json()).data[0];
    };
    // A, B, A: the second report reaches the node that does not own the game.
    const first = await post(a, reporters[0], home);
    const second = await post(b, reporters[1], home);
    const third = await post(a, reporters[2], home);
    expect(first.tier).toBe('provisional');
    expect(second).toMatchObject({ tier: 'provisional', event_id: first.event_id });
    expect(third.tier).toBe('confirmed');
    // A later play of the same game marks the end: events arrive in order, so nothing of the first play can follow it.
    const marker = await post(b, reporters[0], away);
    for (const w of watchers) await w.until((c) => c.events().some((e) => e.id === marker.event_id), 5000, 'the marker play');
    for (const w of watchers) {
      const play = w.events().filter((e) => e.team === home);
      expect(play.map((e) => e.tier)).toEqual(['provisional', 'confirmed']);
      expect(play[0].id).toBe(first.event_id);
      expect(play[1]).toMatchObject({ id: third.event_id, provisional_id: first.event_id, confidence: { reporters: 3 } });
    }
  });

  it.runIf(available)('counts a key’s stream connections across both nodes', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'free', plan: 'free', products: ['live'] }, new Date());
    const one = await connect(`${a.ws}/v1/stream`, key);
    const two = await connect(`${b.ws}/v1/stream`, key);
    clients.push(one, two);
    await one.until((c) => c.frames.length > 0, 5000, 'first subscribed');
    await two.until((c) => c.frames.length > 0, 5000, 'second subscribed');
    const three = await connect(`${a.ws}/v1/stream`, key);
    clients.push(three);
    await three.until((c) => c.closeCode !== null, 5000, 'close');
    expect(three.closeCode).toBe(4029);
    const fourOnB = await connect(`${b.ws}/v1/stream`, key);
    clients.push(fourOnB);
    await fourOnB.until((c) => c.closeCode !== null, 5000, 'close');
    expect(fourOnB.closeCode).toBe(4029);
    one.close();
    await new Promise((r) => setTimeout(r, 200));
    const five = await connect(`${b.ws}/v1/stream`, key);
    clients.push(five);
    await five.until((c) => c.frames.length > 0 || c.closeCode !== null, 5000, 'subscribed after release');
    expect(five.closeCode).toBeNull();
  });

  it.runIf(available)('a stream token minted on node A opens node B’s event stream, and its connections count with its key’s across the nodes', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'free tokens', plan: 'free', products: ['live'] }, new Date());
    const minted = await fetch(`${a.http}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: '{"sports": ["soccer"]}' });
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()).data;
    const onB = await fetch(`${b.http}/v1/stream?token=${token}`, { headers: { accept: 'text/event-stream' } });
    expect(onB.status).toBe(200);
    const body = onB.body?.getReader();
    const first = await body?.read();
    expect(new TextDecoder().decode(first?.value)).toContain('retry:');
    const byKeyOnA = await connect(`${a.ws}/v1/stream`, key);
    clients.push(byKeyOnA);
    await byKeyOnA.until((c) => c.frames.length > 0, 5000, 'subscribed');
    // The free plan's two connections are held (one by the token on B, one by the key on A): a third is refused on either node.
    const third = await fetch(`${a.http}/v1/stream?token=${token}`, { headers: { accept: 'text/event-stream' } });
    expect(third.status).toBe(429);
    expect((await third.json()).error.code).toBe('connection_limit');
    await body?.cancel();
  });

  it.runIf(available)('a key revoked on node A loses its open streams on both nodes within seconds', async () => {
    const [a, b] = nodes;
    const { key, record } = await a.built.services.keys.create({ name: 'revoked', plan: 'pro', products: ['live'] }, new Date());
    const onA = await connect(`${a.ws}/v1/stream`, key);
    const onB = await connect(`${b.ws}/v1/stream`, key);
    clients.push(onA, onB);
    await onA.until((c) => c.frames.length > 0, 5000, 'subscribed on A');
    await onB.until((c) => c.frames.length > 0, 5000, 'subscribed on B');
    // Node B authenticated the key a moment ago: its principal is cached there.
    expect((await fetch(`${b.http}/v1/me`, { headers: auth(key) })).status).toBe(200);
    expect(await a.built.services.keys.revoke(record.id, new Date())).toBe(true);
    await onA.until((c) => c.closeCode !== null, 10_000, 'close on A');
    await onB.until((c) => c.closeCode !== null, 10_000, 'close on B');
    expect([onA.closeCode, onB.closeCode]).toEqual([4401, 4401]);
  });

  it.runIf(available)('a refused handshake gives its slot back in Redis too', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'free', plan: 'free', products: ['live'] }, new Date());
    const port = Number(new URL(a.http).port);
    for (let i = 0; i < 2; i++) expect(await badHandshake(port, key)).toMatch(/^HTTP\/1\.1 400/);
    const one = await connect(`${b.ws}/v1/stream`, key);
    const two = await connect(`${a.ws}/v1/stream`, key);
    clients.push(one, two);
    await one.until((c) => c.frames.length > 0 || c.closeCode !== null, 5000, 'first');
    await two.until((c) => c.frames.length > 0 || c.closeCode !== null, 5000, 'second');
    expect([one.closeCode, two.closeCode]).toEqual([null, null]);
  });

  it.runIf(available)('delivers in seq order when the bus carries N+1 before N, and fills a hole from the store', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'order', plan: 'internal', products: ['live'] }, new Date());
    const onB = await connect(`${b.ws}/v1/stream?sport=golf`, key);
    clients.push(onB);
    await onB.until((c) => c.frames.length > 0, 5000, 'subscribed');
    const row = (i: number) => ({
      type: 'score', tier: 'provisional', game_id: 'golf_990001', competition_id: 'golf_990001_c', sport: 'golf', league: 'sgt', season_id: 'sgt_2026',
      team: 'AAA', event_type: 'birdie', points: i, clock: null, ts: new Date().toISOString(), agreement: 1, reporters: 1, latency_ms: 1, probability: 1,
      provisional_id: null, retracted_id: null,
    });
    // Two appends published in the opposite order (node A's publish of N lost the race to N+1's).
    const [n] = await a.built.services.events.append([row(1)]);
    const [n1] = await a.built.services.events.append([row(2)]);
    await a.bus.publish([n1]);
    await a.bus.publish([n]);
    await onB.until((c) => c.events().length >= 2, 5000, 'both events');
    // A hole the bus never fills (its publish was lost): read from the store after the hold.
    const [m] = await a.built.services.events.append([row(3)]);
    const [m1] = await a.built.services.events.append([row(4)]);
    await a.bus.publish([m1]);
    await onB.until((c) => c.events().length >= 4, 5000, 'the hole and the event after it');
    expect(onB.events().map((e) => e.id)).toEqual([n, n1, m, m1].map((e) => e.event.id));
  });

  it.runIf(available)('shares the rate limit of a key across both nodes', async () => {
    const [a, b] = nodes;
    const { key } = await a.built.services.keys.create({ name: 'free', plan: 'free', products: ['live'] }, new Date());
    // A sliding window: 61 requests within a minute are one too many, wherever the minute falls.
    let last = 0;
    for (let i = 0; i < 61; i++) last = (await fetch(`${(i % 2 ? a : b).http}/v1/me`, { headers: auth(key) })).status;
    expect(last).toBe(429);
  });
});
