import net from 'node:net';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../src/store/events/events.js';
import WebSocket from 'ws';
import { auth, listen, testApp, until, type TestApp } from './helpers.js';
import { connect, type StreamClient } from './ws-client.js';

interface Game {
  id: string;
  competition_id: string;
  competitors: { entity_id: string; role: string }[];
}

describe('WebSocket stream', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let liveKey: string;
  let reporters: string[];
  let soccer: Game;
  let basketball: Game;
  const open: StreamClient[] = [];

  beforeAll(async () => {
    t = await testApp({ streamLimits: { heartbeatMs: 300, pingMs: 200 } });
    const at = await listen(t);
    base = at.http;
    wsBase = at.ws;
    liveKey = await t.key({ products: ['live'] });
    reporters = await Promise.all([1, 2, 3, 4, 5].map(() => t.key({ products: ['report'] })));
    const games = (await t.app.inject({ url: '/v1/games?date=today&limit=1000', headers: auth(liveKey) })).json().data as (Game & { sport: string })[];
    soccer = games.filter((g) => g.sport === 'soccer')[0];
    basketball = games.filter((g) => g.sport === 'basketball')[0];
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const code = (g: Game, role = 'home') => String(g.competitors.find((c) => c.role === role)?.entity_id.split(':').pop());
  const report = (key: string, body: unknown) =>
    fetch(`${base}/v1/reports`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const stream = async (query = '', key = liveKey) => {
    const c = await connect(`${wsBase}/v1/stream${query}`, key);
    open.push(c);
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };

  it('refuses before the upgrade with the JSON error body', async () => {
    const noKey = await connect(`${wsBase}/v1/stream`).catch((e: { status: number; body: { error: { type: string } } }) => e);
    expect(noKey).toMatchObject({ status: 401, body: { error: { type: 'authentication_error' } } });
    const reportOnly = await connect(`${wsBase}/v1/stream`, reporters[0]).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(reportOnly).toMatchObject({ status: 403, body: { error: { code: 'product_not_in_plan' } } });
    const bbOnly = await t.key({ products: ['live'], sports: ['basketball'] });
    const wrongSport = await connect(`${wsBase}/v1/stream?sport=soccer`, bbOnly).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(wrongSport).toMatchObject({ status: 403, body: { error: { code: 'sport_not_in_scope' } } });
    const badParam = await connect(`${wsBase}/v1/stream?sports=soccer`, liveKey).catch((e: { status: number; body: { error: { param: string } } }) => e);
    expect(badParam).toMatchObject({ status: 400, body: { error: { param: 'sports' } } });
    const badTier = await connect(`${wsBase}/v1/stream?tier=maybe`, liveKey).catch((e: { status: number }) => e);
    expect(badTier).toMatchObject({ status: 400 });
  });

  it('sends provisional at once and confirmed after three reporters, with confidence', async () => {
    const all = await stream(`?game=${soccer.id}`);
    const confirmedOnly = await stream(`?game=${soccer.id}&tier=confirmed`);
    const other = await stream('?sport=basketball');
    const team = code(soccer);
    const first = await report(reporters[0], { game_id: soccer.id, team, points: 1 });
    expect(first.status).toBe(202);
    const { data } = await first.json();
    expect(data[0]).toMatchObject({ tier: 'provisional' });
    expect(data[0].id).toMatch(/^rpt_/);
    await all.until((c) => c.events().length === 1, 5000, 'provisional');
    const prov = all.events()[0];
    expect(prov).toMatchObject({ type: 'score', tier: 'provisional', game_id: soccer.id, team, points: 1, schema: 'svc.event.v1', id: data[0].event_id });
    expect(Object.keys(prov).sort()).toEqual(['confidence', 'game_id', 'id', 'points', 'schema', 'team', 'tier', 'ts', 'type']);
    await report(reporters[1], { game_id: soccer.id, team, points: 1 });
    const third = await (await report(reporters[2], { game_id: soccer.id, team, points: 1 })).json();
    expect(third.data[0].tier).toBe('confirmed');
    await all.until((c) => c.events().length === 2, 5000, 'confirmed');
    const conf = all.events()[1];
    expect(conf).toMatchObject({ tier: 'confirmed', provisional_id: prov.id, confidence: { reporters: 3 } });
    expect(conf.confidence).toMatchObject({ agreement: 1 });
    await confirmedOnly.until((c) => c.events().length === 1, 5000, 'confirmed-only');
    expect(confirmedOnly.events()[0].id).toBe(conf.id);
    expect(other.events()).toHaveLength(0);
    const rest = (await t.app.inject({ url: `/v1/games/${soccer.id}/events`, headers: auth(liveKey) })).json().data;
    expect(rest.map((e: { id: string }) => e.id)).toEqual([conf.id]);
  });

  it('handles subscribe, unsubscribe and ping messages', async () => {
    const c = await stream('?sport=tennis');
    c.send({ op: 'ping' });
    await c.until((x) => x.frames.some((f) => f.type === 'pong'), 3000, 'pong');
    c.send({ op: 'subscribe', games: [basketball.id] });
    await c.until((x) => x.frames.filter((f) => f.type === 'subscribed').length === 2, 3000, 'resubscribed');
    await report(reporters[0], { game_id: basketball.id, team: code(basketball), points: 3 });
    await c.until((x) => x.events().length === 1, 3000, 'basketball event');
    c.send({ op: 'unsubscribe', games: [basketball.id] });
    await c.until((x) => x.frames.filter((f) => f.type === 'subscribed').length === 3, 3000, 'unsubscribed');
    await report(reporters[1], { game_id: basketball.id, team: code(basketball, 'away'), points: 2 });
    c.send({ op: 'ping' });
    await c.until((x) => x.frames.filter((f) => f.type === 'pong').length === 2, 3000, 'pong 2');
    expect(c.events()).toHaveLength(1);
    c.send({ op: 'subscribe', sports: ['curling'] });
    await c.until((x) => x.frames.some((f) => f.type === 'error'), 3000, 'error frame');
    c.send('not json');
    await c.until((x) => x.frames.filter((f) => f.type === 'error').length === 2, 3000, 'error frame 2');
  });

  it('sends heartbeats after silence', async () => {
    const c = await stream('?sport=golf');
    await c.until((x) => x.frames.filter((f) => f.type === 'heartbeat').length >= 2, 5000, 'heartbeats');
  });

  it('resumes with since: ordered, gap-free, duplicate-free while events are published', async () => {
    const team = code(basketball);
    const seen = await stream(`?game=${basketball.id}`);
    await report(reporters[3], { game_id: basketball.id, team, points: 1 });
    await seen.until((c) => c.events().length >= 1, 5000, 'anchor');
    const since = String(seen.events()[0].id);
    // Publish concurrently while the resuming client connects and replays.
    let stop = false;
    let posted = 0;
    const publisher = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        const res = await report(reporters[i % 5], { game_id: basketball.id, team: i % 2 ? team : code(basketball, 'away'), points: 1 + (i % 3), observed_at: new Date(Date.now() - 1000 * (i % 20) - 40_000 * i).toISOString() });
        expect(res.status).toBe(202);
        posted++;
      }
    })();
    await new Promise((r) => setTimeout(r, 30));
    const resumed = await stream(`?game=${basketball.id}&since=${since}`);
    expect(resumed.frames.find((f) => f.type === 'subscribed')?.recovered).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    stop = true;
    await publisher;
    expect(posted).toBeGreaterThan(0);
    const expected = (await t.services.events.after(Number(since.slice(4)), 100_000, { games: [basketball.id] })).map((e) => e.event.id);
    await resumed.until((c) => c.events().length >= expected.length, 10_000, 'all events');
    const got = resumed.events().map((e) => String(e.id));
    expect(got).toEqual(expected);
    expect(new Set(got).size).toBe(got.length);
  });

  it('delivers a burst (writes coalesced per subscriber) as separate frames, complete and in order', async () => {
    const c = await stream('?sport=mma');
    const other = await stream('?sport=mma&tier=confirmed');
    const fake = (seq: number, tier: 'provisional' | 'confirmed'): StoredEvent => ({
      seq,
      ownerKeyId: null,
      competitionId: 'mma_smma_1',
      seasonId: 'smma_2026',
      sport: 'mma',
      league: 'smma',
      event: {
        id: `evt_${String(seq).padStart(12, '0')}`, type: 'score', tier, game_id: 'mma_1', sport: 'mma', league: 'smma', team: 'X', event_type: 'strike', points: 1, clock: null,
        ts: new Date().toISOString(), confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: 1 }, schema: 'svc.event.v1',
      },
    });
    const batch = (from: number) => Array.from({ length: 300 }, (_, j) => fake(from + j, j % 3 === 0 ? 'confirmed' : 'provisional'));
    const first = batch(20_000_000);
    const second = batch(20_000_300);
    // Two publishes in one event-loop turn: both land in the same flush.
    const published = [t.services.bus.publish(first), t.services.bus.publish(second)];
    await Promise.all(published);
    const all = [...first, ...second].map((e) => e.event.id);
    await c.until((x) => x.events().length >= all.length, 10_000, 'the burst');
    expect(c.events().map((e) => e.id)).toEqual(all);
    const confirmed = [...first, ...second].filter((e) => e.event.tier === 'confirmed').map((e) => e.event.id);
    await other.until((x) => x.events().length >= confirmed.length, 10_000, 'the confirmed part of the burst');
    expect(other.events().map((e) => e.id)).toEqual(confirmed);
    // Control frames queue behind the events already queued: the pong comes after the burst.
    await t.services.bus.publish(batch(20_000_600));
    c.send({ op: 'ping' });
    await c.until((x) => x.frames.some((f) => f.type === 'pong'), 5000, 'pong');
    const pongAt = c.frames.findIndex((f) => f.type === 'pong');
    expect(c.frames.slice(0, pongAt).filter((f) => f.type === 'score')).toHaveLength(900);
  });

  it('closes a consumer that stops reading with 4008', async () => {
    // Its own app with slow pings, so the silent peer is dropped for its buffer, not its pongs.
    const slow = await testApp({ streamLimits: { pingMs: 60_000 } });
    const { port } = await listen(slow);
    const sock = net.connect(port, '127.0.0.1');
    const keyB64 = crypto.randomBytes(16).toString('base64');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(
      `GET /v1/stream?sport=mma HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${keyB64}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${await slow.key({ products: ['live'] })}\r\n\r\n`,
    );
    await new Promise<void>((r) => sock.once('data', () => r()));
    sock.pause();
    const before = slow.gateway.connections;
    expect(before).toBe(1);
    const fake = (seq: number): StoredEvent => ({
      seq,
      ownerKeyId: null,
      competitionId: 'mma_smma_1',
      seasonId: 'smma_2026',
      sport: 'mma',
      league: 'smma',
      event: {
        id: `evt_${seq}`, type: 'score', tier: 'provisional', game_id: 'mma_1', sport: 'mma', league: 'smma', team: 'X', event_type: 'strike', points: 1, clock: null,
        ts: new Date().toISOString(), confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: 1 }, schema: 'svc.event.v1',
        provisional_id: 'x'.repeat(2000),
      },
    });
    for (let i = 0; i < 40 && slow.gateway.connections >= before; i++) {
      await slow.services.bus.publish(Array.from({ length: 1000 }, (_, j) => fake(10_000_000 + i * 1000 + j)));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(slow.gateway.connections).toBe(0);
    // Read what was queued: it ends with a close frame (opcode 8) carrying 4008 'slow_consumer'.
    const closeFrame = Buffer.concat([Buffer.from([0x88, 2 + 'slow_consumer'.length, 0x0f, 0xa8]), Buffer.from('slow_consumer')]);
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no 4008 close frame')), 20_000);
      sock.on('data', (c: Buffer) => {
        chunks.push(c);
        if (Buffer.concat(chunks.slice(-2)).includes(closeFrame)) {
          clearTimeout(timer);
          resolve();
        }
      });
      sock.resume();
    });
    sock.destroy();
    await slow.close();
  });

  it('drops peers that stop answering pings', async () => {
    const sock = net.connect(Number(new URL(base).port), '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(
      `GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${liveKey}\r\n\r\n`,
    );
    await new Promise<void>((r) => sock.once('data', () => r()));
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    sock.resume();
    await closed;
  });

  it('spreads a ping round over its ticks instead of pinging every subscriber at once', async () => {
    // A round of 1.6 s is 16 ticks of 100 ms; 32 subscribers make 2 per tick. Pinging them all in
    // one turn held up every event published meanwhile (bench/stream at 10,000 subscribers).
    const spread = await testApp({ streamLimits: { pingMs: 1600 } });
    const { ws } = await listen(spread);
    const key = await spread.key({ products: ['live'] });
    const firstPing: number[] = [];
    const clients = await Promise.all(
      Array.from({ length: 32 }, async () => {
        const c = new WebSocket(`${ws}/v1/stream`, { headers: auth(key) });
        await new Promise<void>((resolve, reject) => {
          c.once('message', () => resolve());
          c.once('error', reject);
        });
        c.once('ping', () => firstPing.push(performance.now()));
        return c;
      }),
    );
    try {
      await until(() => firstPing.length === 32, 5000, 'a ping to every subscriber');
      // Pings of one tick arrive together; ticks are 100 ms apart.
      firstPing.sort((a, b) => a - b);
      const groups: number[][] = [];
      for (const at of firstPing) {
        const last = groups[groups.length - 1];
        if (last && at - last[last.length - 1] < 40) last.push(at);
        else groups.push([at]);
      }
      expect(groups.length).toBeGreaterThanOrEqual(8);
      expect(Math.max(...groups.map((g) => g.length))).toBeLessThanOrEqual(8);
    } finally {
      for (const c of clients) c.terminate();
      await spread.close();
    }
  });

  it('closes its stream clients with 1001 when the app closes, instead of waiting for them to leave', async () => {
    const own = await testApp();
    const { ws } = await listen(own);
    const c = await connect(`${ws}/v1/stream`, await own.key({ products: ['live'] }));
    await c.until((x) => x.frames.length > 0, 5000, 'subscribed');
    // Before: the HTTP server's close waited for the upgraded socket, and the 1001 came only after it.
    const closing = own.close();
    await c.until((x) => x.closeCode !== null, 5000, 'the close frame');
    expect(c.closeCode).toBe(1001);
    await closing;
  });

  it('enforces the plan’s connection limit with 4029', async () => {
    const free = await t.key({ plan: 'free', products: ['live'] });
    const a = await stream('', free);
    const b = await stream('', free);
    const c = await connect(`${wsBase}/v1/stream`, free);
    open.push(c);
    await c.until((x) => x.closeCode !== null, 5000, 'close');
    expect(c.closeCode).toBe(4029);
    a.close();
    await new Promise((r) => setTimeout(r, 100));
    const d = await stream('', free);
    expect(d.frames[0].type).toBe('subscribed');
    b.close();
  });
});
