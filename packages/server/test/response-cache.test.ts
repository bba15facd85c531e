import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, auth, engines, testApp, type TestApp } from './helpers.js';

/**
 * The response cache is declared per route (`config.cache`): a cached route answers a repeated
 * URL for the same key from memory until the TTL passes or a local write empties it; other keys
 * and other routes are not served from it. An answer is kept from the second miss of its URL on.
 */
describe.each(engines())('response cache on %s', (engine) => {
  let t: TestApp;
  let key: string;
  let other: string;
  const clock = new ManualClock();
  let id = '';
  beforeAll(async () => {
    t = await testApp({ engine, clock });
    key = await t.key();
    other = await t.key();
    const first = await t.db.kysely.selectFrom('competitions').select('id').where('league', '=', 'wc').orderBy('id').executeTakeFirstOrThrow();
    id = first.id;
  });
  afterAll(async () => t.close());
  const nameOf = async (k: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/competitions/${id}`, headers: auth(k) });
    expect(res.statusCode).toBe(200);
    return res.json().data.name;
  };
  // Behind svc's back: no write path runs, so nothing empties the cache.
  const rename = (name: string) => t.db.kysely.updateTable('competitions').set({ name }).where('id', '=', id).execute();

  it('keeps nothing for a URL asked for once', async () => {
    await rename('once');
    expect(await nameOf(other)).toBe('once');
    await rename('twice');
    expect(await nameOf(other)).toBe('twice');
    await rename('thrice');
    expect(await nameOf(other)).toBe('twice');
    clock.advance(1001);
  });

  it('answers a repeated URL from memory until the TTL passes', async () => {
    await rename('before');
    expect(await nameOf(key)).toBe('before');
    expect(await nameOf(key)).toBe('before');
    await rename('after');
    expect(await nameOf(key)).toBe('before');
    clock.advance(1001);
    expect(await nameOf(key)).toBe('after');
  });

  it('keeps answers per key', async () => {
    await rename('first');
    clock.advance(1001);
    expect(await nameOf(key)).toBe('first');
    await rename('second');
    expect(await nameOf(other)).toBe('second');
    expect(await nameOf(key)).toBe('first');
  });

  it('is emptied by a local write', async () => {
    await rename('cached');
    clock.advance(1001);
    expect(await nameOf(key)).toBe('cached');
    await rename('fresh');
    t.services.cache.invalidate();
    expect(await nameOf(key)).toBe('fresh');
  });

  it('caches only routes that declare it, and only their 200 answers', async () => {
    t.services.cache.invalidate();
    expect((await t.app.inject({ method: 'GET', url: '/v1/competitions/soccer_wc_999999', headers: auth(key) })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/v1/me', headers: auth(key) })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: auth(key) })).statusCode).toBe(200);
    expect(t.services.cache.size).toBe(0);
    await nameOf(key);
    await nameOf(key);
    expect(t.services.cache.size).toBe(1);
  });
});
