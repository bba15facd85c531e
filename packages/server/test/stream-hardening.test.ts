import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/domain/keys.js';
import type { NewEvent } from '../src/store/events/events.js';
import { ManualClock, auth, listen, testApp, type TestApp } from './helpers.js';
import { badHandshake, connect, type StreamClient } from './ws-client.js';

/** Holes a hostile client found in the stream, each closed through real sockets. */
describe('stream hardening', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  const open: StreamClient[] = [];

  beforeAll(async () => {
    t = await testApp({ streamLimits: { keyCheckMs: 200 } });
    const at = await listen(t);
    base = at.http;
    wsBase = at.ws;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const stream = async (query: string, key: string) => {
    const c = await connect(`${wsBase}/v1/stream${query}`, key);
    open.push(c);
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };
  const keyId = async (key: string) => {
    const found = await t.services.keys.findByHash(hashKey(key));
    if (!found) throw new Error('key not stored');
    return found.key.id;
  };

  it('closes the open sockets of a revoked key with 4401 and refuses its next upgrade', async () => {
    const key = await t.key({ products: ['live'] });
    const other = await t.key({ products: ['live'] });
    const revoked = await stream('', key);
    const kept = await stream('', other);
    // Authenticated a moment ago: the principal is in the authenticator's cache.
    expect((await fetch(`${base}/v1/me`, { headers: auth(key) })).status).toBe(200);
    expect(await t.services.keys.revoke(await keyId(key), new Date())).toBe(true);
    await revoked.until((c) => c.closeCode !== null, 10_000, 'the revoked key’s socket to close');
    expect(revoked.closeCode).toBe(4401);
    expect(revoked.ws.readyState).toBe(revoked.ws.CLOSED);
    expect(kept.closeCode).toBeNull();
    // The cache does not keep the revoked key alive on this node.
    const again = await connect(`${wsBase}/v1/stream`, key).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(again).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    expect((await fetch(`${base}/v1/me`, { headers: auth(key) })).status).toBe(401);
  });

  it('gives back the connection slot of a handshake that ws refuses', async () => {
    const free = await t.key({ plan: 'free', products: ['live'] });
    // The plan allows 2 connections: two refused handshakes must not use them up.
    for (let i = 0; i < 2; i++) expect(await badHandshake(Number(new URL(base).port), free)).toMatch(/^HTTP\/1\.1 400/);
    const a = await stream('', free);
    const b = await stream('', free);
    expect([a.closeCode, b.closeCode]).toEqual([null, null]);
  });

  describe('subscription caps', () => {
    let small: TestApp;
    let smallWs: string;
    const smallOpen: StreamClient[] = [];
    beforeAll(async () => {
      small = await testApp({ streamLimits: { maxSubscriptionsPerSocket: 10, maxSubscriptionsPerKey: 15 } });
      smallWs = (await listen(small)).ws;
    });
    afterAll(async () => {
      for (const c of smallOpen) c.close();
      await small.close();
    });
    const games = (from: number, n: number) => Array.from({ length: n }, (_, i) => `basketball_${from + i}`);
    const on = async (app: string, query: string, key: string, list = open) => {
      const c = await connect(`${app}/v1/stream${query}`, key);
      list.push(c);
      await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
      return c;
    };
    const reply = async (c: StreamClient, msg: unknown) => {
      const before = c.frames.length;
      c.send(msg);
      await c.until((x) => x.frames.length > before, 5000, 'a reply');
      return c.frames[before];
    };

    it('refuses a subscribe past the default per-socket cap with an error frame, adding nothing', async () => {
      const c = await on(wsBase, '', await t.key({ products: ['live'] }));
      expect(await reply(c, { op: 'subscribe', games: games(1, 3000) })).toMatchObject({ type: 'error', code: 'subscription_limit' });
      // Nothing of the refused message was added: one game now is the whole (changed) set.
      expect(await reply(c, { op: 'subscribe', games: ['basketball_1'] })).toMatchObject({ type: 'subscribed', games: ['basketball_1'] });
    });

    it('echoes only what a message changed', async () => {
      const c = await on(smallWs, '?sport=golf', await small.key({ products: ['live'] }), smallOpen);
      expect(await reply(c, { op: 'subscribe', games: games(1, 5) })).toMatchObject({ type: 'subscribed', op: 'subscribe', sports: [], leagues: [], games: games(1, 5) });
      expect(await reply(c, { op: 'subscribe', games: games(3, 5) })).toMatchObject({ type: 'subscribed', op: 'subscribe', sports: [], games: games(6, 2) });
      expect(await reply(c, { op: 'unsubscribe', games: ['basketball_2', 'basketball_99'], sports: ['golf'] })).toMatchObject({
        type: 'subscribed', op: 'unsubscribe', sports: ['golf'], games: ['basketball_2'],
      });
    });

    it('caps a socket and a key across its sockets; a closed socket gives its share back', async () => {
      const key = await small.key({ products: ['live'] });
      const tooMany = await connect(`${smallWs}/v1/stream?game=${games(1, 11).join(',')}`, key).catch((e: { status: number; body: { error: { code: string } } }) => e);
      expect(tooMany).toMatchObject({ status: 400, body: { error: { code: 'subscription_limit' } } });
      const a = await on(smallWs, `?game=${games(1, 10).join(',')}`, key, smallOpen);
      expect(await reply(a, { op: 'subscribe', sports: ['golf'] })).toMatchObject({ type: 'error', code: 'subscription_limit' });
      const b = await on(smallWs, `?game=${games(100, 4).join(',')}`, key, smallOpen);
      expect(await reply(b, { op: 'subscribe', games: games(200, 2) })).toMatchObject({ type: 'error', code: 'subscription_limit' });
      expect(await reply(b, { op: 'subscribe', games: games(200, 1) })).toMatchObject({ type: 'subscribed', games: games(200, 1) });
      const refused = await connect(`${smallWs}/v1/stream?game=basketball_300`, key).catch((e: { status: number; body: { error: { code: string } } }) => e);
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'subscription_limit' } } });
      a.close();
      await a.until((x) => x.closeCode !== null, 5000, 'a closed');
      await b.until(() => true, 100, 'the server to see the close');
      let answer = await reply(b, { op: 'subscribe', games: games(200, 5) });
      for (let i = 0; i < 20 && answer.type === 'error'; i++) answer = await reply(b, { op: 'subscribe', games: games(200, 5) });
      expect(answer).toMatchObject({ type: 'subscribed', games: games(201, 4) });
    });
  });

  describe('rate limits', () => {
    // A clock that never moves: nothing leaves the rate-limit window during the test.
    let metered: TestApp;
    let meteredWs: string;
    const meteredOpen: StreamClient[] = [];
    beforeAll(async () => {
      metered = await testApp({ clock: new ManualClock(Math.floor(Date.now() / 60_000) * 60_000 + 1000) });
      meteredWs = (await listen(metered)).ws;
    });
    afterAll(async () => {
      for (const c of meteredOpen) c.close();
      await metered.close();
    });
    const spend = async (key: string, n: number) => {
      let last = 0;
      for (let i = 0; i < n; i++) last = (await metered.app.inject({ url: '/v1/me', headers: auth(key) })).statusCode;
      expect(last).toBe(200);
    };
    const remaining = async (key: string) => Number((await metered.app.inject({ url: '/v1/me', headers: auth(key) })).headers['ratelimit-remaining']);
    const open1 = async (query: string, key: string) => {
      const c = await connect(`${meteredWs}/v1/stream${query}`, key);
      meteredOpen.push(c);
      await c.until((x) => x.frames.length > 0 || x.closeCode !== null, 5000, 'a first frame');
      return c;
    };

    it('counts an upgrade as a request and refuses it with 429 past the limit', async () => {
      const free = await metered.key({ plan: 'free', products: ['live'] });
      await spend(free, 50);
      expect(await remaining(free)).toBe(9);
      const a = await open1('', free);
      expect(a.frames[0]).toMatchObject({ type: 'subscribed' });
      expect(await remaining(free)).toBe(7);
      await spend(free, 6);
      const b = await open1('', free);
      expect(b.frames[0]).toMatchObject({ type: 'subscribed' });
      const refused = await connect(`${meteredWs}/v1/stream`, free).catch((e: { status: number; body: { error: { code: string } } }) => e);
      expect(refused).toMatchObject({ status: 429, body: { error: { type: 'rate_limit_error', code: 'rate_limited' } } });
    });

    it('counts a resume as one more request per started 1,000 replayed events; past the limit: error frame and 4429', async () => {
      const free = await metered.key({ plan: 'free', products: ['live'] });
      const total = (await metered.services.events.after(0, 20_000, {})).length;
      const pages = total > 10_000 ? 11 : Math.floor(total / 1000) + 1;
      await spend(free, 40);
      expect(await remaining(free)).toBe(19);
      // Resume from the start of the log: read in pages until exhausted or one past the cap, each charged.
      const resumed = await open1('?since=evt_0', free);
      expect(resumed.frames[0]).toMatchObject({ type: 'subscribed', recovered: total <= 10_000 });
      // 1 for the upgrade, 1 per page, 1 for this request.
      expect(await remaining(free)).toBe(19 - 1 - pages - 1);
      resumed.close();
      await spend(free, 19 - 1 - pages - 1 - 2);
      const cut = await open1('?since=evt_0', free);
      await cut.until((x) => x.closeCode !== null, 5000, 'the close');
      expect(cut.frames).toMatchObject([{ type: 'error', code: 'rate_limited' }]);
      expect(cut.closeCode).toBe(4429);
    });
  });

  describe('resume with a subscription filter', () => {
    let capped: TestApp;
    let cappedWs: string;
    beforeAll(async () => {
      capped = await testApp({ streamLimits: { replayMaxEvents: 50 } });
      cappedWs = (await listen(capped)).ws;
    });
    afterAll(async () => {
      for (const c of cappedOpen) c.close();
      await capped.close();
    });

    const row = (game: string, sport: string, league: string, n: number): NewEvent => ({
      type: 'score', tier: n % 2 ? 'confirmed' : 'provisional', game_id: game, competition_id: `${game}_c`, sport, league, season_id: `${league}_2026`,
      team: 'AAA', event_type: 'goal', points: 1, clock: null, ts: new Date().toISOString(), agreement: 1, reporters: 3, latency_ms: 5,
      provisional_id: null, retracted_id: null,
    });
    const cappedOpen: StreamClient[] = [];
    const resume = async (app: string, query: string, key: string) => {
      const c = await connect(`${app}/v1/stream${query}`, key);
      (app === cappedWs ? cappedOpen : open).push(c);
      await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
      return c;
    };

    it('replays every matching event after since even when other events outnumber the cap', async () => {
      const key = await capped.key({ products: ['live'] });
      const [anchor] = await capped.services.events.append([row('soccer_900001', 'soccer', 'intl', 0)]);
      // 60 events of another game, then 10 of the subscribed game, 5 of the subscribed league and 5 of the sport.
      await capped.services.events.append(Array.from({ length: 60 }, (_, i) => row('soccer_900002', 'soccer', 'intl', i)));
      const wanted = await capped.services.events.append([
        ...Array.from({ length: 10 }, (_, i) => row('basketball_900003', 'basketball', 'sbl', i)),
        ...Array.from({ length: 5 }, (_, i) => row('tennis_900004', 'tennis', 'stt', i)),
        ...Array.from({ length: 5 }, (_, i) => row('golf_900005', 'golf', 'sgt', i)),
      ]);
      const c = await resume(cappedWs, `?game=basketball_900003&league=stt&sport=golf&since=${anchor.event.id}`, key);
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      await c.until((x) => x.events().length >= 20, 5000, 'the 20 matching events');
      expect(c.events().map((e) => e.id)).toEqual(wanted.map((e) => e.event.id));
      // With tier narrowing: only the confirmed half, still complete.
      const confirmed = await resume(cappedWs, `?game=basketball_900003&tier=confirmed&since=${anchor.event.id}`, key);
      expect(confirmed.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      const want = wanted.filter((e) => e.event.game_id === 'basketball_900003' && e.event.tier === 'confirmed').map((e) => e.event.id);
      await confirmed.until((x) => x.events().length >= want.length, 5000, 'the confirmed events');
      expect(confirmed.events().map((e) => e.id)).toEqual(want);
    });

    it('says recovered: false, with no partial replay, when the matching events exceed the cap', async () => {
      const key = await capped.key({ products: ['live'] });
      const [anchor] = await capped.services.events.append([row('soccer_900011', 'soccer', 'intl', 0)]);
      await capped.services.events.append(Array.from({ length: 51 }, (_, i) => row('soccer_900012', 'soccer', 'intl', i)));
      const c = await resume(cappedWs, `?game=soccer_900012&since=${anchor.event.id}`, key);
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: false });
      c.send({ op: 'ping' });
      await c.until((x) => x.frames.some((f) => f.type === 'pong'), 5000, 'pong');
      expect(c.events()).toHaveLength(0);
    });

    it('replays a league from since=evt_0 through the whole log', async () => {
      const key = await t.key({ products: ['live'] });
      const expected = (await t.services.events.after(0, 100_000, { leagues: ['wc'] })).map((e) => e.event.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThanOrEqual(10_000);
      const c = await resume(wsBase, '?league=wc&since=evt_0', key);
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      await c.until((x) => x.events().length >= expected.length, 10_000, 'every wc event');
      expect(c.events().map((e) => e.id)).toEqual(expected);
    });
  });
});
