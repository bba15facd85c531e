import { systemClock } from '../src/domain/clock.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { RedisBus } from '../src/bus/redis-bus.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import type { Db } from '../src/store/sql/db.js';
import { auth, freshDb, testConfig } from './helpers.js';
import { connect, type StreamClient } from './ws-client.js';

interface Deployment {
  prefix: string;
  built: BuiltApp;
  db: Db;
  redis: Redis;
  bus: RedisBus;
  http: string;
  ws: string;
}

/**
 * Two deployments (each its own database, as staging and production would be) on one Redis, with
 * different SVC_REDIS_PREFIX. They hold the same games and the same API key, the worst case:
 * without prefixes each would hear the other's events and spend the other's budgets.
 */
describe('SVC_REDIS_PREFIX: two deployments on one Redis', () => {
  const redisUrl = inject('redisUrl');
  if (!redisUrl && process.env.CI) throw new Error('Redis required in CI');
  const run = Math.random().toString(36).slice(2, 10);
  const deployments: Deployment[] = [];
  const clients: StreamClient[] = [];
  let sharedKey = '';
  let sharedKeyId = '';

  beforeAll(async () => {
    // Without Redis the tests below are skipped (and CI fails above): nothing to set up.
    if (redisUrl) {
      for (const name of ['blue', 'green']) {
        const prefix = `svc-test-${run}-${name}:`;
        const { db, dataDir } = await freshDb('sqlite');
        const redis = new Redis(redisUrl);
        const bus = new RedisBus(redis, redis.duplicate(), redisKeys(prefix));
        await bus.whenReady();
        const built = await buildApp({ config: testConfig(dataDir, { redisPrefix: prefix }), db, clock: systemClock, redis, bus });
        await built.app.listen({ port: 0, host: '127.0.0.1' });
        const addr = built.app.server.address();
        if (!addr || typeof addr === 'string') throw new Error('no address');
        deployments.push({ prefix, built, db, redis, bus, http: `http://127.0.0.1:${addr.port}`, ws: `ws://127.0.0.1:${addr.port}` });
      }
      // The same key (same id, same secret) in both databases, as after restoring one from the other.
      const [blue, green] = deployments;
      const made = await blue.built.services.keys.create({ name: 'shared', plan: 'free', products: ['live', 'report'] }, new Date());
      sharedKey = made.key;
      sharedKeyId = made.record.id;
      const row = await blue.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', sharedKeyId).executeTakeFirstOrThrow();
      await green.db.kysely.insertInto('api_keys').values(row).execute();
    }
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const d of deployments) {
      await d.built.app.close();
      await d.bus.close();
      await d.db.close();
      const stale = await d.redis.keys(`${d.prefix}*`);
      if (stale.length) await d.redis.del(...stale);
      d.redis.disconnect();
    }
  });

  const report = (d: Deployment, key: string, body: unknown) =>
    fetch(`${d.http}/v1/reports`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it.runIf(Boolean(redisUrl))('a deployment hears only its own events, though both have the same game ids', async () => {
    const [blue, green] = deployments;
    const reporters = await Promise.all(deployments.map((d) => d.built.services.keys.create({ name: 'r', plan: 'internal', products: ['live', 'report'] }, new Date())));
    const game = (await (await fetch(`${blue.http}/v1/games?date=today&sport=basketball`, { headers: auth(reporters[0].key) })).json()).data[0];
    const team = String(game.competitors[0].entity_id).split(':').pop();
    const onGreen = await connect(`${green.ws}/v1/stream?game=${game.id}`, reporters[1].key);
    const onBlue = await connect(`${blue.ws}/v1/stream?game=${game.id}`, reporters[0].key);
    clients.push(onGreen, onBlue);
    await onGreen.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5000, 'green subscribed');
    await onBlue.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5000, 'blue subscribed');

    // Blue's event is on Redis (blue's own client has it) before green's is published; Redis
    // delivers in publish order, so had green heard blue's channel, blue's event would come first.
    const b = await report(blue, reporters[0].key, { game_id: game.id, team, points: 2 });
    expect(b.status).toBe(202);
    await onBlue.until((c) => c.events().length === 1, 5000, 'blue event on blue');
    const g = await report(green, reporters[1].key, { game_id: game.id, team, points: 3 });
    expect(g.status).toBe(202);
    await onGreen.until((c) => c.events().length >= 1, 5000, 'green event on green');
    expect(onGreen.events().map((e) => e.points)).toEqual([3]);
    expect(onGreen.events()[0].id).toBe((await g.json()).data[0].event_id);
    expect(onBlue.events().map((e) => e.points)).toEqual([2]);
  });

  it.runIf(Boolean(redisUrl))('rate limits and stream connection counts are per deployment, for one key id', async () => {
    const [blue, green] = deployments;
    const blueStreams = [await connect(`${blue.ws}/v1/stream`, sharedKey), await connect(`${blue.ws}/v1/stream`, sharedKey)];
    clients.push(...blueStreams);
    for (const c of blueStreams) await c.until((x) => x.frames.length > 0 || x.closeCode !== null, 5000, 'blue stream answer');
    // Blue is at its cap now (its third is refused); green's two still open.
    const third = await connect(`${blue.ws}/v1/stream`, sharedKey);
    clients.push(third);
    await third.until((c) => c.closeCode !== null, 5000, 'blue third refused');
    expect(third.closeCode).toBe(4029);
    const greenStreams = [await connect(`${green.ws}/v1/stream`, sharedKey), await connect(`${green.ws}/v1/stream`, sharedKey)];
    clients.push(...greenStreams);
    for (const c of greenStreams) {
      await c.until((x) => x.frames.some((f) => f.type === 'subscribed') || x.closeCode !== null, 5000, 'green stream answer');
      expect(c.closeCode).toBeNull();
    }

    // The free plan: 60 requests a minute (the upgrades above spent some), 2 stream connections.
    for (let i = 0; i < 60; i++) {
      const res = await blue.built.app.inject({ url: '/v1/me', headers: auth(sharedKey) });
      if (res.statusCode === 429) break;
    }
    const blocked = await blue.built.app.inject({ url: '/v1/me', headers: auth(sharedKey) });
    expect(blocked.statusCode).toBe(429);
    const fresh = await green.built.app.inject({ url: '/v1/me', headers: auth(sharedKey) });
    expect(fresh.statusCode).toBe(200);
    expect(Number(fresh.headers['ratelimit-remaining'])).toBeGreaterThan(40);

    // Everything the key left in Redis sits under one deployment's prefix or the other's.
    const touched = await blue.redis.keys(`*${sharedKeyId}*`);
    expect(touched.length).toBeGreaterThanOrEqual(2);
    for (const k of touched) expect(k.startsWith(blue.prefix) || k.startsWith(green.prefix), k).toBe(true);
    expect(touched.some((k) => k.startsWith(blue.prefix)) && touched.some((k) => k.startsWith(green.prefix))).toBe(true);
  });
});
