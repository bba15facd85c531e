import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PER_ADDRESS } from '../src/routes/demo/index.js';
import { expectError } from './contract.js';
import { redactUrl, scrubSecrets } from '../src/http/logging.js';
import { auth, engines, listen, ManualClock, sleep, testApp, until, type TestApp } from './helpers.js';
import { SseClient } from './sse-client.js';
import { connect, type StreamClient } from './ws-client.js';

interface Game {
  id: string;
  sport: string;
  competitors: { entity_id: string; role: string }[];
}

/**
 * Stream tokens (docs/stream.md "Stream tokens"): minted by a back end with its key, used by a page
 * as `?token=` on GET /v1/stream only, narrowed, expiring, ended with their key. Real sockets:
 * `ws` and the `eventsource` package.
 */
describe('stream tokens', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let liveKey: string;
  let reporter: string;
  let soccer: Game;
  let soccer2: Game;
  let basketball: Game;
  const closers: (() => void)[] = [];
  let n = 0;

  beforeAll(async () => {
    t = await testApp({ streamLimits: { keyCheckMs: 200 } });
    ({ http: base, ws: wsBase } = await listen(t));
    liveKey = await t.key({ products: ['live'] });
    reporter = await t.key({ products: ['report'] });
    const games = (await t.app.inject({ url: '/v1/games?date=today&limit=1000', headers: auth(liveKey) })).json().data as Game[];
    [soccer, soccer2] = games.filter((g) => g.sport === 'soccer');
    basketball = games.filter((g) => g.sport === 'basketball')[0];
  });
  afterAll(async () => {
    for (const close of closers) close();
    await t.close();
  });

  const home = (g: Game) => String(g.competitors.find((c) => c.role === 'home')?.entity_id.split(':').pop());
  /** A provisional event, from a reporter of its own (one key has at most two lone candidates open per game). */
  const score = async (g: Game): Promise<string> => {
    const res = await fetch(`${base}/v1/reports`, {
      method: 'POST',
      headers: { ...auth(await t.key({ products: ['report'] })), 'content-type': 'application/json' },
      body: JSON.stringify({ game_id: g.id, team: home(g), points: g.sport === 'basketball' ? 2 : 1, observed_at: new Date(Date.now() - 40_000 * ++n).toISOString() }),
    });
    expect(res.status).toBe(202);
    return (await res.json()).data[0].event_id;
  };
  const mint = (body: unknown, key = liveKey) =>
    fetch(`${base}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const token = async (body: unknown = {}, key = liveKey): Promise<string> => {
    const res = await mint(body, key);
    expect(res.status).toBe(201);
    return (await res.json()).data.token;
  };
  const sse = (query: string) => {
    const c = new SseClient(`${base}/v1/stream${query}`);
    closers.push(() => c.close());
    return c;
  };
  const ws = async (query: string): Promise<StreamClient> => {
    const c = await connect(`${wsBase}/v1/stream${query}`);
    closers.push(() => c.close());
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };
  const errorOf = async (res: Response) => ((await res.json()) as { error: { type: string; code: string; param?: string } }).error;

  it('mints a token: 201 with the documented fields, ttl_s defaulting to an hour, never cached', async () => {
    const before = Date.now();
    const res = await mint({ games: [soccer.id, soccer.id] });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { data } = await res.json();
    expect(Object.keys(data).sort()).toEqual(['expires_at', 'games', 'leagues', 'sports', 'token']);
    expect(data).toMatchObject({ sports: null, leagues: null, games: [soccer.id] });
    expect(data.token).toMatch(/^sst_[0-9a-f]{16}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(Date.parse(data.expires_at) - before).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(Date.parse(data.expires_at) - before).toBeLessThanOrEqual(3600_000 + 5000);
    const short = await (await mint({ ttl_s: 60, sports: ['soccer'], leagues: ['wc'] })).json();
    expect(Date.parse(short.data.expires_at) - before).toBeLessThanOrEqual(65_000);
    expect(short.data).toMatchObject({ sports: ['soccer'], leagues: ['wc'], games: null });
    // Opaque: the key is nowhere in it, and two tokens of the same request differ.
    expect(short.data.token).not.toContain(liveKey.slice(9, 20));
    expect(await token()).not.toBe(await token());
  });

  it('refuses bad input with the field named', async () => {
    const cases: [unknown, string, string?][] = [
      [{ ttl_s: 59 }, 'ttl_s'],
      [{ ttl_s: 86_401 }, 'ttl_s'],
      [{ ttl_s: 1.5 }, 'ttl_s'],
      [{ ttl_s: '60' }, 'ttl_s'],
      [{ sports: ['curling'] }, 'sports'],
      [{ leagues: ['nope'] }, 'leagues'],
      [{ games: ['soccer'] }, 'games'],
      [{ games: [] }, 'games'],
      [{ sports: 'soccer' }, 'sports'],
      [{ games: Array.from({ length: 101 }, (_, i) => `soccer_${i}`) }, 'games'],
      [{ scope: 'all' }, 'scope'],
    ];
    for (const [body, param] of cases) {
      const res = await mint(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).param, JSON.stringify(body)).toBe(param);
    }
    const notJson = await fetch(`${base}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(liveKey), 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('is never wider than its key: product live, the key’s sports and leagues', async () => {
    expect(await errorOf(await mint({}, reporter))).toMatchObject({ code: 'product_not_in_plan' });
    const bbOnly = await t.key({ products: ['live'], sports: ['basketball'] });
    expect(await errorOf(await mint({ sports: ['soccer'] }, bbOnly))).toMatchObject({ code: 'sport_not_in_scope', param: 'sports' });
    expect(await errorOf(await mint({ games: [soccer.id] }, bbOnly))).toMatchObject({ code: 'sport_not_in_scope', param: 'games' });
    // A token of a basketball key, not narrowed further, still sees basketball only.
    const wide = await token({}, bbOnly);
    const c = await ws(`?token=${wide}`);
    const refused = await connect(`${wsBase}/v1/stream?token=${wide}&sport=soccer`).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'sport_not_in_scope' } } });
    await score(soccer);
    const bb = await score(basketball);
    await c.until((x) => x.events().length === 1, 5000, 'basketball');
    expect(c.events().map((f) => f.id)).toEqual([bb]);
  });

  it('narrowed to one game never sees another, over the WebSocket and the event stream', async () => {
    const one = await token({ games: [soccer.id] });
    const viaWs = await ws(`?token=${one}`);
    const viaWsSport = await ws(`?token=${one}&sport=soccer`);
    const viaSse = sse(`?token=${one}`);
    await viaSse.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    // Outside the token: where the resume below starts (an id inside the resume window).
    const anchor = await score(basketball);
    const mine = [];
    for (const g of [soccer, soccer2, basketball, soccer, soccer2]) {
      const id = await score(g);
      if (g === soccer) mine.push(id);
    }
    await viaSse.until((x) => x.events().length === 2, 5000, 'sse');
    await viaWs.until((x) => x.events().length === 2, 5000, 'ws');
    await viaWsSport.until((x) => x.events().length === 2, 5000, 'ws sport');
    await sleep(300);
    expect(viaSse.events().map((m) => m.id)).toEqual(mine);
    expect(viaWs.events().map((f) => f.id)).toEqual(mine);
    expect(viaWsSport.events().map((f) => f.id)).toEqual(mine);
    // Asking for another game: refused before the stream, and as a message.
    const other = await fetch(`${base}/v1/stream?token=${one}&game=${soccer2.id}`, { headers: { accept: 'text/event-stream' } });
    expect(other.status).toBe(403);
    expect(await errorOf(other)).toMatchObject({ code: 'sport_not_in_scope', param: 'game' });
    viaWs.send({ op: 'subscribe', games: [soccer2.id] });
    await viaWs.until((x) => x.frames.some((f) => f.type === 'error'), 5000, 'error frame');
    expect(viaWs.frames.find((f) => f.type === 'error')).toMatchObject({ code: 'sport_not_in_scope' });
    // A resume reads through the same narrowing.
    const resumed = sse(`?token=${one}&since=${anchor}`);
    await resumed.until((x) => x.events().length >= 2, 5000, 'resume');
    expect(resumed.events().every((m) => m.data.game_id === soccer.id)).toBe(true);
  });

  it('authenticates the stream only: REST refuses it with a 401 however it is sent', async () => {
    const tok = await token();
    for (const res of [
      await fetch(`${base}/v1/games?date=today`, { headers: auth(tok) }),
      await fetch(`${base}/v1/games?date=today&token=${tok}`),
      await fetch(`${base}/v1/me?access_token=${tok}`),
      await fetch(`${base}/v1/export?league=wc`, { headers: auth(tok) }),
      await mint({}, tok),
      await fetch(`${base}/v1/webhooks`, { method: 'POST', headers: { ...auth(tok), 'content-type': 'application/json' }, body: '{"url":"https://example.com/h"}' }),
    ]) {
      expect(res.status).toBe(401);
      expect((await errorOf(res)).type).toBe('authentication_error');
    }
    // A key and a token at once is ambiguous.
    const both = await fetch(`${base}/v1/stream?token=${tok}`, { headers: { ...auth(liveKey), accept: 'text/event-stream' } });
    expect(both.status).toBe(400);
    // Altered or made up: 401 invalid_api_key.
    const body = tok.split('.');
    body[2] = body[2].slice(0, -2) + (body[2].endsWith('AA') ? 'BB' : 'AA');
    for (const bad of [body.join('.'), 'sst_nope', `${tok}x`]) {
      const res = await fetch(`${base}/v1/stream?token=${encodeURIComponent(bad)}`, { headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(401);
      expect((await errorOf(res)).code).toBe('invalid_api_key');
    }
  });

  it('counts against its key’s stream connections', async () => {
    const free = await t.key({ products: ['live'], plan: 'free' });
    const tok = await token({}, free);
    const a = sse(`?token=${tok}`);
    await a.until((x) => x.of('subscribed').length === 1, 5000, 'first');
    await ws(`?token=${tok}`);
    const third = await fetch(`${base}/v1/stream?token=${tok}`, { headers: { accept: 'text/event-stream' } });
    expect(third.status).toBe(429);
    expect((await errorOf(third)).code).toBe('connection_limit');
    const byKey = await connect(`${wsBase}/v1/stream`, free);
    await byKey.until((x) => x.closeCode !== null, 5000, '4029');
    expect(byKey.closeCode).toBe(4029);
  });

  it('ends with its key: a revocation closes its streams (4401, or a close frame) and later ones are 401 invalid_api_key', async () => {
    const key = await t.key({ products: ['live'] });
    const keyId = (await t.services.auth.authenticate(key)).keyId;
    const tok = await token({}, key);
    const viaWs = await ws(`?token=${tok}`);
    const viaSse = sse(`?token=${tok}`);
    await viaSse.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    await t.services.keys.revoke(keyId, new Date());
    await viaWs.until((x) => x.closeCode !== null, 5000, 'ws closed');
    expect(viaWs.closeCode).toBe(4401);
    await viaSse.until((x) => x.of('close').length === 1, 5000, 'close frame');
    expect(viaSse.of('close')[0].data).toEqual({ type: 'close', code: 4401, reason: 'key_revoked' });
    // EventSource reconnects by itself, is refused with a 401, and stops for good.
    await viaSse.until((x) => x.es.readyState === x.es.CLOSED, 5000, 'EventSource given up');
    expect(viaSse.opens).toBe(1);
    const again = await fetch(`${base}/v1/stream?token=${tok}`, { headers: { accept: 'text/event-stream' } });
    expect(again.status).toBe(401);
    expect((await errorOf(again)).code).toBe('invalid_api_key');
  });

  it('is redacted from log lines wherever it appears', () => {
    const tok = 'sst_0123456789abcdef.AAAAAAAAAAAAAAAA.c2VjcmV0.BBBBBBBBBBBBBBBBBBBBBB';
    expect(redactUrl(`/v1/stream?game=soccer_1&token=${tok}`)).toBe('/v1/stream?game=soccer_1&token=[redacted]');
    expect(redactUrl(`/v1/stream?t=${tok}`)).not.toContain('c2VjcmV0');
    expect(scrubSecrets(`{"msg":"x ${tok} y"}`)).not.toContain('c2VjcmV0');
  });
});

describe('stream token expiry', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    t = await testApp({ clock });
  });
  afterAll(async () => t.close());

  it('expires on time: valid until expires_at, then 401 token_expired, and an open stream ends at that moment', async () => {
    const { http, ws: wsBase } = await listen(t);
    const key = await t.key({ products: ['live'] });
    const minted = await fetch(`${http}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: '{"ttl_s": 60}' });
    const { token, expires_at } = (await minted.json()).data;
    expect(Date.parse(expires_at)).toBe(clock.now() + 60_000);
    // 1.5 s before it expires, by the service's clock: both transports open.
    clock.set(Date.parse(expires_at) - 1500);
    const viaWs = await connect(`${wsBase}/v1/stream?token=${token}`);
    const viaSse = new SseClient(`${http}/v1/stream?token=${token}`);
    await viaSse.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    const opened = Date.now();
    await viaWs.until((x) => x.closeCode !== null, 5000, 'ws closed at expiry');
    expect(viaWs.closeCode).toBe(4403);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1000);
    await viaSse.until((x) => x.of('close').length === 1, 5000, 'sse closed at expiry');
    expect(viaSse.of('close')[0].data).toMatchObject({ code: 4403, reason: 'token_expired' });
    clock.set(Date.parse(expires_at));
    await viaSse.until((x) => x.es.readyState === x.es.CLOSED, 5000, 'EventSource given up');
    viaSse.close();
    const late = await fetch(`${http}/v1/stream?token=${token}`, { headers: { accept: 'text/event-stream' } });
    expect(late.status).toBe(401);
    expect((await late.json()).error).toMatchObject({ type: 'authentication_error', code: 'token_expired' });
    const lateWs = await connect(`${wsBase}/v1/stream?token=${token}`).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(lateWs).toMatchObject({ status: 401, body: { error: { code: 'token_expired' } } });
  });
});

describe.each(engines())('stream tokens on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ engine, streamLimits: { keyCheckMs: 200 } });
  });
  afterAll(async () => t.close());

  it('a token opens the event stream with its key read from the store, and the key’s revocation ends it', async () => {
    const { http } = await listen(t);
    const key = await t.key({ products: ['live'] });
    const minted = await fetch(`${http}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: '{"sports": ["soccer"]}' });
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()).data;
    const c = new SseClient(`${http}/v1/stream?token=${token}`);
    try {
      await c.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
      await t.services.keys.revoke((await t.services.auth.authenticate(key)).keyId, new Date());
      await c.until((x) => x.of('close').length === 1, 5000, 'close frame');
      expect(c.of('close')[0].data).toMatchObject({ code: 4401, reason: 'key_revoked' });
      const again = await fetch(`${http}/v1/stream?token=${token}`, { headers: { accept: 'text/event-stream' } });
      expect(again.status).toBe(401);
      expect((await again.json()).error.code).toBe('invalid_api_key');
    } finally {
      c.close();
    }
  });
});

/**
 * The sandbox demo's endpoints need no key and its tokens share one key's connections and request
 * budget among every visitor (docs/stream.md "A scoreboard in a public page"): each client address
 * is limited, so one client cannot take them all and the next visitor's page still works. Clients
 * at other addresses are other loopback addresses (127.0.0.2, 127.0.0.3 …), which Linux routes to
 * the same server.
 */
describe('the demo is limited per client address', () => {
  let t: TestApp;
  let port: number;
  const open: http.ClientRequest[] = [];
  beforeAll(async () => {
    t = await testApp();
    port = (await listen(t)).port;
  });
  afterAll(async () => {
    for (const r of open) r.destroy();
    await t.close();
  });

  const token = async (from: string) => {
    const res = await t.app.inject({ method: 'POST', url: '/demo/token', remoteAddress: from });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.token as string;
  };
  /** An event stream opened from `from` with a demo token: its status, and its request, held open when 200. */
  const sse = (from: string, tok: string): Promise<{ status: number; body: string; req: http.ClientRequest }> =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: `/v1/stream?token=${tok}`, localAddress: from, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode === 200) {
          open.push(req);
          res.once('data', () => resolve({ status: 200, body: '', req }));
          return;
        }
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, req }));
      });
      req.on('error', reject);
    });

  it('POST /demo/token and GET /demo/games: past the per-address minute, 429 rate_limited with Retry-After; another address is served', async () => {
    for (let i = 0; i < DEMO_PER_ADDRESS.tokensPerMinute; i++) await token('127.0.0.2');
    const refused = await t.app.inject({ method: 'POST', url: '/demo/token', remoteAddress: '127.0.0.2' });
    expectError(refused, 429, 'rate_limit_error', { code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await token('127.0.0.3');
    for (let i = 0; i < DEMO_PER_ADDRESS.gamesPerMinute; i++) expect((await t.app.inject({ url: '/demo/games', remoteAddress: '127.0.0.2' })).statusCode).toBe(200);
    expectError(await t.app.inject({ url: '/demo/games', remoteAddress: '127.0.0.2' }), 429, 'rate_limit_error', { code: 'rate_limited' });
    expect((await t.app.inject({ url: '/demo/games', remoteAddress: '127.0.0.3' })).statusCode).toBe(200);
    // An IPv6 client counts by its /64: another address of the same block is the same client.
    for (let i = 0; i < DEMO_PER_ADDRESS.tokensPerMinute; i++) await token(`2001:db8:1:2::${i + 1}`);
    expect((await t.app.inject({ method: 'POST', url: '/demo/token', remoteAddress: '2001:db8:1:2:ffff::9' })).statusCode).toBe(429);
    expect((await t.app.inject({ method: 'POST', url: '/demo/token', remoteAddress: '2001:db8:1:3::1' })).statusCode).toBe(201);
  });

  it('one address holds at most its share of the demo key’s streams; the next visitor still gets one', async () => {
    const hoarder = await token('127.0.0.4');
    const held = [];
    for (let i = 0; i < DEMO_PER_ADDRESS.stream.connections; i++) held.push(await sse('127.0.0.4', hoarder));
    expect(held.map((h) => h.status)).toEqual(held.map(() => 200));
    const more = await sse('127.0.0.4', hoarder);
    expect(more.status).toBe(429);
    expect(JSON.parse(more.body).error).toMatchObject({ code: 'connection_limit' });
    // Over the WebSocket: closed with 4029 like any connection over a limit.
    const ws = await connect(`ws://127.0.0.1:${port}/v1/stream?token=${hoarder}`, undefined, { localAddress: '127.0.0.4' });
    await ws.until((c) => c.closeCode !== null, 5000, 'the close');
    expect(ws.closeCode).toBe(4029);
    const visitor = await sse('127.0.0.5', await token('127.0.0.5'));
    expect(visitor.status).toBe(200);
    // A stream the hoarder closes gives its address's slot back.
    held[0].req.destroy();
    await until(async () => (await sse('127.0.0.4', hoarder)).status === 200, 5000, 'the freed slot');
  });

  it('stream opens with the demo’s tokens are counted per address: past them 429 rate_limited, while another address opens', async () => {
    const tok = await token('127.0.0.6');
    let last = 0;
    for (let i = 0; i <= DEMO_PER_ADDRESS.stream.requestsPerMinute; i++) {
      const s = await sse('127.0.0.6', tok);
      last = s.status;
      s.req.destroy();
      if (last !== 200) break;
    }
    expect(last).toBe(429);
    expect((await sse('127.0.0.7', await token('127.0.0.7'))).status).toBe(200);
  });
});
