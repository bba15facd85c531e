import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/domain/keys.js';
import type { NewEvent } from '../src/store/events/events.js';
import { REPLAY_SLICE_BYTES } from '../src/stream/connection.js';
import { ManualClock, auth, listen, testApp, until, type TestApp } from './helpers.js';
import { badHandshake, connect, type StreamClient } from './ws-client.js';
import { readRaw } from './sse-client.js';

/** A score event of a game, stamped now: what a resume from a recent id replays. */
const row = (game: string, sport: string, league: string, n: number, competition = `${game}_c`, season = `${league}_2026`): NewEvent => ({
  type: 'score', tier: n % 2 ? 'confirmed' : 'provisional', game_id: game, competition_id: competition, sport, league, season_id: season,
  team: 'AAA', event_type: 'goal', points: 1, clock: null, ts: new Date().toISOString(), agreement: 1, reporters: 3, latency_ms: 5, probability: 1,
  provisional_id: null, retracted_id: null,
});

/** Holes a hostile client found in the stream, each closed through real sockets. */
describe('stream hardening', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  const open: StreamClient[] = [];

  beforeAll(async () => {
    t = await testApp({ streamLimits: { keyCheckMs: 200, sseHeartbeatMs: 300 } });
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
      const [anchor] = await metered.services.events.append([row('basketball_900201', 'basketball', 'sbl', 0)]);
      await metered.services.events.append(Array.from({ length: 2500 }, (_, i) => row('basketball_900201', 'basketball', 'sbl', i)));
      // Read in pages of 1,000 until a short one: 1,000, 1,000 and 500, each charged.
      const pages = 3;
      await spend(free, 40);
      expect(await remaining(free)).toBe(19);
      const resumed = await open1(`?since=${anchor.event.id}`, free);
      expect(resumed.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      // 1 for the upgrade, 1 per page, 1 for this request.
      expect(await remaining(free)).toBe(19 - 1 - pages - 1);
      await resumed.until((x) => x.events().length >= 2500, 10_000, 'the 2,500 replayed events');
      resumed.close();
      await spend(free, 19 - 1 - pages - 1 - 2);
      const cut = await open1(`?since=${anchor.event.id}`, free);
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

    it('replays a league from a recent id: the events after it that the key may read', async () => {
      const key = await t.key({ products: ['live'] });
      const [anchor] = await t.services.events.append([row('soccer_900301', 'soccer', 'wc', 0, 'soccer_wc_900301', 'wc_2026')]);
      const wanted = await t.services.events.append(Array.from({ length: 30 }, (_, i) => row('soccer_900301', 'soccer', 'wc', i, 'soccer_wc_900301', 'wc_2026')));
      const c = await resume(wsBase, `?league=wc&since=${anchor.event.id}`, key);
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      await c.until((x) => x.events().length >= wanted.length, 10_000, 'every wc event after the anchor');
      expect(c.events().map((e) => e.id)).toEqual(wanted.map((e) => e.event.id));
    });
  });

  describe('a resume serves only what the key may read live', () => {
    // The 2022 World Cup final: archived (final, before today), so its events need the archive product.
    const FINAL = { game: 'soccer_21728', competition: 'soccer_wc_21728', season: 'wc_2022' };
    let anchor: string;
    let live: string[];
    let archived: string[];
    beforeAll(async () => {
      [anchor] = (await t.services.events.append([row('soccer_900401', 'soccer', 'wc', 0, 'soccer_wc_900401', 'wc_2026')])).map((e) => e.event.id);
      // Appended now to an archived game (an official correction, say) and to a game being played.
      archived = (await t.services.events.append([1, 2, 3].map((i) => row(FINAL.game, 'soccer', 'wc', i, FINAL.competition, FINAL.season)))).map((e) => e.event.id);
      live = (await t.services.events.append([1, 2].map((i) => row('soccer_900401', 'soccer', 'wc', i, 'soccer_wc_900401', 'wc_2026')))).map((e) => e.event.id);
    });
    const quiet = async (c: StreamClient) => {
      // A pong comes after everything the resume sent.
      c.send({ op: 'ping' });
      await c.until((x) => x.frames.some((f) => f.type === 'pong'), 5000, 'pong');
    };
    const sse = async (query: string, lastEventId: string) => {
      const res = await readRaw(`${base}/v1/stream${query}`, { accept: 'text/event-stream', 'last-event-id': lastEventId }, (text) => text.includes(': heartbeat'), 10_000);
      const frames = res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; id?: string; recovered?: boolean });
      return { status: res.status, frames, events: frames.filter((f) => f.type === 'score').map((f) => f.id) };
    };
    const demoToken = async () => (await t.app.inject({ method: 'POST', url: '/demo/token' })).json().data.token as string;

    it('an id past the log’s head is a 400 before the upgrade, not a resume that waits for ever', async () => {
      const key = await t.key({ products: ['live'] });
      const head = await t.services.events.lastSeq();
      const refused = await connect(`${wsBase}/v1/stream?since=evt_${String(head + 1000).padStart(12, '0')}`, key).catch((e: { status: number; body: { error: { code: string; param: string } } }) => e);
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'invalid_parameter', param: 'since' } } });
      const last = await stream(`?since=evt_${String(head).padStart(12, '0')}`, key);
      expect(last.frames[0]).toMatchObject({ type: 'subscribed' });
    });

    it('since=evt_0 replays nothing and says recovered: false (WebSocket, a live-only key)', async () => {
      const c = await stream('?league=wc&since=evt_0', await t.key({ products: ['live'] }));
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: false });
      await quiet(c);
      expect(c.events()).toEqual([]);
    });

    it('an id older than the resume window replays nothing: recovered: false', async () => {
      const [first2022] = await t.services.events.after(0, 1, { games: [FINAL.game] });
      const c = await stream(`?game=${FINAL.game}&since=${first2022.event.id}`, await t.key({ products: ['live', 'archive'] }));
      expect(c.frames[0]).toMatchObject({ type: 'subscribed', recovered: false });
      await quiet(c);
      expect(c.events()).toEqual([]);
    });

    it('a live-only key resumes the live games only; a key with the archive product gets the archived game too', async () => {
      const liveOnly = await stream(`?league=wc&since=${anchor}`, await t.key({ products: ['live'] }));
      expect(liveOnly.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      await quiet(liveOnly);
      expect(liveOnly.events().map((e) => e.id)).toEqual(live);
      const both = await stream(`?league=wc&since=${anchor}`, await t.key({ products: ['live', 'archive'] }));
      await both.until((x) => x.events().length >= 5, 5000, 'five events');
      expect(both.events().map((e) => e.id)).toEqual([...archived, ...live]);
      // The archived game by name: nothing for the live-only key, as its REST events answer 403.
      const byGame = await stream(`?game=${FINAL.game}&since=${anchor}`, await t.key({ products: ['live'] }));
      expect(byGame.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      await quiet(byGame);
      expect(byGame.events()).toEqual([]);
    });

    it('a demo token (no key needed) resuming with Last-Event-ID: evt_0 gets no archive (server-sent events)', async () => {
      const fromZero = await sse(`?token=${await demoToken()}&league=wc`, 'evt_0');
      expect(fromZero.status).toBe(200);
      expect(fromZero.frames[0]).toMatchObject({ type: 'subscribed', recovered: false });
      expect(fromZero.events).toEqual([]);
      const recent = await sse(`?token=${await demoToken()}&league=wc`, anchor);
      expect(recent.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
      expect(recent.events).toEqual(live);
    });
  });

  describe('a resume to a client that never reads', () => {
    let slow: TestApp;
    let port: number;
    beforeAll(async () => {
      slow = await testApp({ streamLimits: { replayStallMs: 300 } });
      port = (await listen(slow)).port;
    });
    afterAll(async () => slow.close());

    /**
     * An event-stream request on a raw socket that stops reading once the stream has started (its
     * `subscribed` frame came): from then on it takes nothing more of the answer.
     */
    const neverReads = async (query: string, key: string): Promise<net.Socket> => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.write(`GET /v1/stream${query} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${key}\r\n\r\n`);
      let text = '';
      await new Promise<void>((resolve, reject) => {
        const onData = (b: Buffer) => {
          text += b.toString('latin1');
          if (!text.includes('event: subscribed')) return;
          s.off('data', onData);
          s.pause();
          resolve();
        };
        s.on('data', onData);
        s.once('close', () => reject(new Error(`closed before the stream started: ${text.slice(0, 200)}`)));
      });
      return s;
    };

    it('goes out in slices within the buffer, and the client is cut as a slow consumer', async () => {
      const key = await slow.key({ products: ['live'] });
      const [anchor] = await slow.services.events.append([row('basketball_900501', 'basketball', 'sbl', 0)]);
      // About 8 MB of frames (4 KB each): more than the kernel's buffers of a loopback socket take (about 4 MB here).
      const big = (i: number): NewEvent => ({ ...row('basketball_900501', 'basketball', 'sbl', i), team: 'T'.repeat(4096) });
      await slow.services.events.append(Array.from({ length: 2000 }, (_, i) => big(i)));
      const sockets = await Promise.all([1, 2, 3].map(() => neverReads(`?since=${anchor.event.id}`, key)));
      // While the replays wait for their clients, the process holds at most about a slice of unsent frames for each.
      let most = 0;
      await until(
        () => {
          most = Math.max(most, slow.gateway.unsentBytes);
          return slow.gateway.connections === 0;
        },
        10_000,
        'the three never-reading clients to be cut',
      );
      expect(most).toBeLessThanOrEqual(3 * 2 * REPLAY_SLICE_BYTES);
      for (const s of sockets) s.destroy();
    });
  });
});
