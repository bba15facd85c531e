import { systemClock } from '../src/domain/clock.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { RedisBus } from '../src/bus/redis-bus.js';
import { redisOptions } from '../src/bus/link.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import { SvcError } from '../src/domain/errors.js';
import { errorReply, RedisRouter, replyError, RouteFailed } from '../src/live/router.js';
import type { StoredEvent } from '../src/store/events/events.js';
import { openDb } from '../src/store/sql/db.js';
import { auth, freshDb, storedEvent, testConfig, until } from './helpers.js';
import { connect, type StreamClient } from './ws-client.js';
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

  it('a report routed to another node fails as RouteFailed saying Redis is away, and nothing is left to reject later', async () => {
    // As serve.ts makes the client: commands wait in ioredis' queue while it reconnects.
    const pub = new Redis(redis.url, { maxRetriesPerRequest: 2 });
    const sub = pub.duplicate();
    for (const c of [pub, sub]) c.on('error', () => undefined);
    const router = new RedisRouter('node-a', pub, sub, redisKeys('svc-test-outage:'));
    try {
      await router.whenReady();
      await redis.stop();
      const started = Date.now();
      const failed: unknown = await router.send('node-b', { kind: 'forget', gameId: 'soccer_1' }, 300).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(RouteFailed);
      // Told apart from an owner that is gone: the report answers 503 bus_unavailable, not consensus_unavailable.
      expect(failed instanceof RouteFailed && failed.busAway).toBe(true);
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
  });

  it('a node whose own channel could not be subscribed at start (Redis away then) routes once Redis is back', async () => {
    await redis.stop();
    const connections: Redis[] = [];
    const open = () => {
      const c = new Redis(redis.url, redisOptions());
      c.on('error', () => undefined);
      connections.push(c);
      return c;
    };
    const keys = redisKeys('svc-test-late-subscribe:');
    const late = new RedisRouter('node-late', open(), open(), keys);
    try {
      // Long enough for the subscription's retries to run out while Redis is away.
      await expect(late.whenReady()).rejects.toThrow();
      await redis.resume();
      const owner = new RedisRouter('node-owner', open(), open(), keys);
      owner.serve(async () => ({ ok: true, results: [] }));
      await owner.whenReady();
      await until(async () => {
        const reply = await late.send('node-owner', { kind: 'forget', gameId: 'soccer_1' }, 1_000).catch((err: unknown) => err);
        return typeof reply === 'object' && reply !== null && 'ok' in reply && reply.ok === true;
      }, 15_000, 'a route from the node that subscribed late');
      await owner.close();
      // The event bus too: one made while Redis was away hears what another node publishes once it is back.
      await redis.stop();
      const lateBus = new RedisBus(open(), open(), keys);
      await expect(lateBus.whenReady()).rejects.toThrow();
      await redis.resume();
      const heard: number[] = [];
      lateBus.subscribe((events) => heard.push(...events.map((e) => e.seq)));
      const otherBus = new RedisBus(open(), open(), keys);
      await otherBus.whenReady();
      await until(async () => {
        await otherBus.publish([storedEvent(987_654)]);
        return heard.includes(987_654);
      }, 15_000, 'an event published by another node');
      await lateBus.close();
      await otherBus.close();
    } finally {
      await late.close().catch(() => undefined);
      for (const c of connections) c.disconnect();
    }
  });

  it('a node keeps answering with its own in-memory rate limits and export slots while Redis is away, and counts in Redis again once it is back', async () => {
    const { db, dataDir } = await freshDb('sqlite');
    const client = new Redis(redis.url, { maxRetriesPerRequest: 2 });
    client.on('error', () => undefined);
    const prefix = 'svc-test-outage-app:';
    const bus = new RedisBus(client, client.duplicate(), redisKeys(prefix));
    await bus.whenReady();
    const built = await buildApp({ config: testConfig(dataDir, { redisPrefix: prefix }), db, clock: systemClock, redis: client, bus });
    const app = built.app;
    try {
      const { key } = await built.services.keys.create({ name: 'free', plan: 'free', products: ['live', 'archive'], sports: null, leagues: null }, new Date());
      const me = () => app.inject({ url: '/v1/me', headers: auth(key) });
      expect((await me()).statusCode).toBe(200);
      expect(Number(await client.exists(redisKeys(prefix).rateLimit((await me()).json().data.id)))).toBe(1);

      await redis.stop();
      const answers: number[] = [];
      for (let i = 0; i < 62; i++) answers.push((await me()).statusCode);
      // Counted in this node's memory from the outage on: 60 a minute, then 429 as usual; never a 500.
      expect(answers.filter((s) => s === 200).length).toBe(60);
      expect(answers.slice(-2)).toEqual([429, 429]);
      const refused = await me();
      expect(refused.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(refused.headers['retry-after']).toBeDefined();
      // Export slots too: the plan's one, held on this node, then given back.
      const slots = built.services.exportSlots;
      const slot = await slots.acquire('key_outage', 1);
      expect(slot).not.toBeNull();
      expect(await slots.acquire('key_outage', 1)).toBeNull();
      if (slot !== null) await slots.release('key_outage', slot);
      expect(await slots.acquire('key_outage', 1)).not.toBeNull();

      await redis.resume();
      for (let i = 0; i < 100 && client.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(client.status).toBe('ready');
      // Redis is the counter again: a fresh, empty one after the restart.
      expect((await me()).statusCode).toBe(200);
    } finally {
      await app.close();
      await bus.close().catch(() => undefined);
      await db.close();
      client.disconnect();
    }
  });

  it('the event bus hands a batch to this node\'s own streams while Redis is away, says it hears no other node meanwhile, and goes through Redis again once it is back', async () => {
    const pub = new Redis(redis.url, { maxRetriesPerRequest: 2 });
    pub.on('error', () => undefined);
    const bus = new RedisBus(pub, pub.duplicate(), redisKeys('svc-test-outage-bus:'));
    const heard: number[][] = [];
    bus.subscribe((events) => heard.push(events.map((e) => e.seq)));
    // Another node on the same channel: what reaches it went through Redis.
    const otherPub = new Redis(redis.url, { maxRetriesPerRequest: 2 });
    otherPub.on('error', () => undefined);
    const other = new RedisBus(otherPub, otherPub.duplicate(), redisKeys('svc-test-outage-bus:'));
    const heardByOther: number[][] = [];
    other.subscribe((events) => heardByOther.push(events.map((e) => e.seq)));
    const batch = (seq: number): StoredEvent[] => [storedEvent(seq)];
    try {
      await bus.whenReady();
      await other.whenReady();
      expect(bus.hearsOthers()).toBe(true);
      await bus.publish(batch(1));
      // This node's own listeners at once, the other node's through Redis; Redis's echo is not heard twice.
      expect(heard).toEqual([[1]]);
      await until(() => heardByOther.length === 1, 5_000, 'the batch through Redis');

      await redis.stop();
      // Known away once the connection closed: a webhook dispatcher then polls instead of waiting to be told.
      await until(() => !bus.hearsOthers(), 10_000, 'the bus to say it hears no other node');
      // Stored before it is published: the call must not fail, and this node's streams get it.
      await expect(bus.publish(batch(2))).resolves.toBeUndefined();
      expect(heard).toEqual([[1], [2]]);

      await redis.resume();
      await until(() => pub.status === 'ready', 10_000, 'the client to reconnect');
      expect(bus.hearsOthers()).toBe(true);
      // Subscribed again by the client itself: the next batch arrives once, through Redis.
      await until(async () => {
        await bus.publish(batch(3));
        await new Promise((r) => setTimeout(r, 100));
        return heardByOther.some((b) => b[0] === 3);
      }, 10_000, 'a batch through Redis again');
      expect(heard.slice(0, 3)).toEqual([[1], [2], [3]]);
      // Each batch once on this node, Redis's echo of its own publish skipped.
      expect(heard.filter((b) => b[0] === 1)).toHaveLength(1);
      expect(heardByOther[0]).toEqual([1]);
      expect(heardByOther.some((b) => b[0] === 2)).toBe(false);
    } finally {
      await bus.close();
      await other.close();
      pub.disconnect();
      otherPub.disconnect();
    }
  });

  it('a stream client on another node gets what was appended while Redis was away once it is back, with no later event to show the hole', async () => {
    const { db: dbA, dataDir } = await freshDb('sqlite');
    const dbB = await openDb({ dataDir, databaseUrl: null });
    const prefix = 'svc-test-outage-catchup:';
    const nodes = [];
    for (const db of [dbA, dbB]) {
      const client = new Redis(redis.url, { maxRetriesPerRequest: 2 });
      client.on('error', () => undefined);
      const bus = new RedisBus(client, client.duplicate(), redisKeys(prefix));
      await bus.whenReady();
      const built = await buildApp({ config: testConfig(dataDir, { redisPrefix: prefix }), db, clock: systemClock, redis: client, bus });
      nodes.push({ built, db, client, bus });
    }
    const [a, b] = nodes;
    let watcher: StreamClient | undefined;
    try {
      await b.built.app.listen({ port: 0, host: '127.0.0.1' });
      const addr = b.built.app.server.address();
      if (!addr || typeof addr === 'string') throw new Error('no address');
      const { key } = await a.built.services.keys.create({ name: 'watch', plan: 'internal', products: ['live'], sports: null, leagues: null }, new Date());
      const game = (await a.built.app.inject({ url: '/v1/games?date=today&sport=soccer&limit=1', headers: auth(key) })).json().data[0];
      const competition = (await a.built.app.inject({ url: `/v1/competitions/${game.competition_id}`, headers: auth(key) })).json().data;
      watcher = await connect(`ws://127.0.0.1:${addr.port}/v1/stream?game=${game.id}`, key);
      await watcher.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5_000, 'subscribed');

      await redis.stop();
      const [stored] = await a.built.services.events.append([
        {
          type: 'score', tier: 'confirmed', game_id: game.id, competition_id: game.competition_id, sport: 'soccer', league: game.league,
          season_id: competition.season_id, team: String(game.competitors[0].entity_id).split(':').pop() ?? '', event_type: 'goal', points: 1,
          clock: "12'", ts: new Date().toISOString(), agreement: 1, reporters: 3, latency_ms: 900, probability: 1, provisional_id: null, retracted_id: null,
        },
      ]);
      await new Promise((r) => setTimeout(r, 300));
      expect(watcher.events()).toEqual([]);

      await redis.resume();
      await watcher.until((c) => c.events().length === 1, 15_000, 'the event appended during the outage');
      expect(watcher.events()[0]).toMatchObject({ id: stored.event.id, game_id: game.id, tier: 'confirmed' });
    } finally {
      watcher?.close();
      for (const n of nodes) {
        await n.built.app.close();
        await n.bus.close().catch(() => undefined);
        await n.db.close();
        n.client.disconnect();
      }
    }
  });
});

/** What a node that routed a report answers when the owner failed (the sender re-throws `replyError`). */
describe('a routed request that failed on the owner', () => {
  it('is the same 503 the sender would answer for a database or Redis fault, and never carries the driver text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:45887'), { code: 'ECONNREFUSED' });
    const readOnly = Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' });
    const redisGone = new Error('Connection is closed.');
    const bug = new TypeError("Cannot read properties of undefined (reading 'x') at /srv/svc/secret/path.js");
    const answered = [refused, readOnly, redisGone, bug].map((err) => {
      const reply = errorReply(err);
      if (reply.ok || reply.notOwner) throw new Error('an error reply');
      const e = replyError(reply);
      return { code: e instanceof SvcError ? e.code : null, status: e instanceof SvcError ? e.status : null, message: e.message };
    });
    expect(answered.map((a) => [a.code, a.status])).toEqual([
      ['store_unavailable', 503],
      ['store_unavailable', 503],
      ['bus_unavailable', 503],
      ['internal_error', 500],
    ]);
    for (const a of answered) expect(a.message).not.toMatch(/ECONNREFUSED|read-only|Connection is closed|secret\/path/);
  });
});
