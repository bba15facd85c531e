import net, { type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, listen, sleep, storedEvent, testApp, type TestApp } from './helpers.js';
import { readRaw, SseClient } from './sse-client.js';
import { connect, type StreamClient } from './ws-client.js';

interface Game {
  id: string;
  sport: string;
  competitors: { entity_id: string; role: string }[];
}

/**
 * GET /v1/stream as server-sent events (docs/stream.md "Server-sent events"), its broadcast delay,
 * and its refusals, with real sockets: the `eventsource` npm package (WHATWG EventSource, which
 * reconnects and sends Last-Event-ID by itself), raw fetch for the wire format, and `ws` beside
 * it for the WebSocket's side of "the same frames".
 */
describe('event stream', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let liveKey: string;
  let reporter: string;
  let soccer: Game;
  let soccer2: Game;
  let basketball: Game;
  const sockets = new Set<Socket>();
  const closers: (() => void)[] = [];
  let n = 0;

  beforeAll(async () => {
    t = await testApp({ streamLimits: { heartbeatMs: 300, sseHeartbeatMs: 400, keyCheckMs: 200 } });
    ({ http: base, ws: wsBase } = await listen(t));
    t.app.server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
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
  /**
   * One provisional event on the game, a new candidate each time (observed 40 s apart), from a
   * reporter of its own: one key has at most two candidates nobody else backs open per game.
   */
  const score = async (g: Game): Promise<string> => {
    const res = await fetch(`${base}/v1/reports`, {
      method: 'POST',
      headers: { ...auth(await t.key({ products: ['report'] })), 'content-type': 'application/json' },
      body: JSON.stringify({ game_id: g.id, team: home(g), points: g.sport === 'basketball' ? 2 : 1, observed_at: new Date(Date.now() - 40_000 * ++n).toISOString() }),
    });
    expect(res.status).toBe(202);
    return (await res.json()).data[0].event_id;
  };
  const sse = (query: string, key: string | undefined = liveKey) => {
    const c = new SseClient(`${base}/v1/stream${query}`, key);
    closers.push(() => c.close());
    return c;
  };
  const ws = async (query: string, key: string | undefined = liveKey): Promise<StreamClient> => {
    const c = await connect(`${wsBase}/v1/stream${query}`, key);
    closers.push(() => c.close());
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };
  const sseHeaders = (key = liveKey) => ({ ...auth(key), accept: 'text/event-stream' });

  it('streams the WebSocket’s frames as id:, event: and data: lines, after a retry: field, with a comment after silence', async () => {
    const socket = await ws(`?game=${soccer.id}`);
    const reading = readRaw(`${base}/v1/stream?game=${soccer.id}`, sseHeaders(), (text) => text.includes('event: score') && text.includes(': heartbeat'), 10_000);
    await sleep(300);
    const id = await score(soccer);
    const { status, headers, text } = await reading;
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(headers.get('cache-control')).toContain('no-cache');
    expect(text.startsWith('retry: 1000\n\n')).toBe(true);
    expect(text).toMatch(/event: subscribed\ndata: \{"type":"subscribed","recovered":false,"sports":\[\],"leagues":\[\],"games":\["[a-z]+_\d+"\],"tier":null,"min_probability":0\}\n\n/);
    const message = /id: (evt_\w+)\nevent: score\ndata: (.*)\n\n/.exec(text);
    expect(message?.[1]).toBe(id);
    await socket.until((c) => c.events().length === 1, 5000, 'the WebSocket’s frame');
    // The same JSON on both transports, byte for byte.
    expect(message?.[2]).toBe(JSON.stringify(socket.events()[0]));
    // The keep-alive is a comment line (EventSource ignores it), sent after sseHeartbeatMs of silence.
    expect(text).toContain('\n\n: heartbeat\n\n');
  });

  it('resumes with Last-Event-ID after the server drops the connection: nothing lost, nothing doubled (eventsource package)', async () => {
    const c = sse(`?game=${soccer.id}`);
    await c.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    const before = [await score(soccer), await score(soccer)];
    await c.until((x) => x.events().length === 2, 5000, 'two events');
    expect(c.events().map((m) => m.id)).toEqual(before);
    // The server side drops every connection; the client reconnects by itself after retry: 1000 ms.
    for (const s of sockets) s.destroy();
    // The test's own keep-alive connections went too: let fetch notice before it reports again.
    await sleep(100);
    const during = [await score(soccer), await score(soccer), await score(soccer)];
    await c.until((x) => x.events().length === 5, 10_000, 'the events of the gap');
    const ids = c.events().map((m) => m.id);
    expect(ids).toEqual([...before, ...during]);
    expect(c.opens).toBe(2);
    expect(c.of('subscribed')[1].data).toMatchObject({ recovered: true });
    // Nothing else arrived: no event doubled or out of order after the reconnection.
    await sleep(300);
    expect(c.events()).toHaveLength(5);
    // Each message's data is the event, its id the event id, its name the event type.
    for (const m of c.events()) expect(m.data).toMatchObject({ id: m.id, type: m.event, game_id: soccer.id });
  });

  it('resumes from ?since= like the WebSocket, and Last-Event-ID wins over it', async () => {
    const first = await score(soccer2);
    const second = await score(soccer2);
    const third = await score(soccer2);
    const bySince = await readRaw(`${base}/v1/stream?game=${soccer2.id}&since=${first}`, sseHeaders(), (x) => x.includes(third));
    expect([...bySince.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1])).toEqual([second, third]);
    expect(bySince.text).toContain('"recovered":true');
    const byHeader = await readRaw(`${base}/v1/stream?game=${soccer2.id}&since=${first}`, { ...sseHeaders(), 'last-event-id': second }, (x) => x.includes(third));
    expect([...byHeader.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1])).toEqual([third]);
  });

  it('refuses with the JSON error body before streaming', async () => {
    const get = (query: string, headers: Record<string, string>) => fetch(`${base}/v1/stream${query}`, { headers });
    const expectError = async (res: Response, status: number, code: string, param?: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body.error).toMatchObject({ code, ...(param ? { param } : {}) });
      expect(body.error.request_id).toMatch(/^req_/);
    };
    await expectError(await get('', { accept: 'text/event-stream' }), 401, 'missing_api_key');
    await expectError(await get('', { ...sseHeaders(), authorization: 'Bearer svc_test_nope' }), 401, 'invalid_api_key');
    await expectError(await get('', auth(liveKey)), 400, 'upgrade_required');
    await expectError(await get('', sseHeaders(reporter)), 403, 'product_not_in_plan');
    await expectError(await get('?sports=soccer', sseHeaders()), 400, 'unknown_parameter', 'sports');
    await expectError(await get('', { ...sseHeaders(), 'last-event-id': 'nope' }), 400, 'invalid_parameter', 'Last-Event-ID');
    await expectError(await get('?since=evt_x', sseHeaders()), 400, 'invalid_parameter', 'since');
    // An id past the log's head was never issued: refused, not taken and then silent for ever.
    await expectError(await get('', { ...sseHeaders(), 'last-event-id': 'evt_999999999999' }), 400, 'invalid_parameter', 'Last-Event-ID');
    await expectError(await get('?since=evt_999999999999', sseHeaders()), 400, 'invalid_parameter', 'since');
    for (const delay of ['301', '-1', '1.5', 'x', '', '0300']) await expectError(await get(`?delay=${delay}`, sseHeaders()), 400, 'invalid_parameter', 'delay');
    const bbOnly = await t.key({ products: ['live'], sports: ['basketball'] });
    await expectError(await get('?sport=soccer', sseHeaders(bbOnly)), 403, 'sport_not_in_scope');
  });

  it('counts against the plan’s connections with the WebSocket: past the limit a 429, and a closed stream gives its slot back', async () => {
    const free = await t.key({ products: ['live'], plan: 'free' });
    const a = sse('', free);
    await a.until((x) => x.of('subscribed').length === 1, 5000, 'first');
    const b = await ws('', free);
    const refused = await fetch(`${base}/v1/stream`, { headers: sseHeaders(free) });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toMatchObject({ type: 'rate_limit_error', code: 'connection_limit' });
    const third = await connect(`${wsBase}/v1/stream`, free);
    await third.until((x) => x.closeCode !== null, 5000, '4029');
    expect(third.closeCode).toBe(4029);
    a.close();
    b.close();
    await sleep(300);
    const again = sse('', free);
    await again.until((x) => x.of('subscribed').length === 1, 5000, 'a slot given back');
    again.close();
  });

  it('cuts off a consumer that stops reading, under the WebSocket’s rule (1 MiB unsent)', async () => {
    const slow = await testApp();
    try {
      const { port } = await listen(slow);
      const sock = net.connect(port, '127.0.0.1');
      await new Promise<void>((r) => sock.once('connect', () => r()));
      sock.write(`GET /v1/stream?sport=mma HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${await slow.key({ products: ['live'] })}\r\n\r\n`);
      await new Promise<void>((r) => sock.once('data', () => r()));
      const closed = new Promise<void>((r) => sock.once('close', () => r()));
      sock.on('error', () => undefined);
      sock.pause();
      expect(slow.gateway.connections).toBe(1);
      const big = (seq: number) => {
        const e = storedEvent(seq);
        return { ...e, sport: 'mma', league: 'smma', event: { ...e.event, id: `evt_${seq}`, sport: 'mma', league: 'smma', game_id: 'mma_1', provisional_id: 'x'.repeat(2000) } };
      };
      for (let i = 0; i < 40 && slow.gateway.connections > 0; i++) {
        await slow.services.bus.publish(Array.from({ length: 1000 }, (_, j) => big(10_000_000 + i * 1000 + j)));
        await sleep(20);
      }
      expect(slow.gateway.connections).toBe(0);
      sock.resume();
      await closed;
    } finally {
      await slow.close();
    }
  });

  it('delay=2 holds every frame until 2 s after its ts on both transports, heartbeats flowing meanwhile, nothing lost', async () => {
    const now = sse(`?game=${basketball.id}`);
    const later = sse(`?game=${basketball.id}&delay=2`);
    const laterWs = await ws(`?game=${basketball.id}&delay=2`);
    await later.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    await now.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    const beats = laterWs.frames.filter((f) => f.type === 'heartbeat').length;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await score(basketball));
      await sleep(300);
    }
    await now.until((x) => x.events().length === 4, 5000, 'undelayed');
    await later.until((x) => x.events().length === 4, 10_000, 'delayed');
    await laterWs.until((x) => x.events().length === 4, 10_000, 'delayed ws');
    expect(laterWs.frames.filter((f) => f.type === 'heartbeat').length).toBeGreaterThan(beats);
    expect(later.events().map((m) => m.id)).toEqual(ids);
    expect(laterWs.events().map((f) => f.id)).toEqual(ids);
    for (const m of later.events()) expect(m.at).toBeGreaterThanOrEqual(Date.parse(String(m.data.ts)) + 2000);
    // Each came about 2 s after the undelayed stream had it.
    for (const [i, m] of later.events().entries()) expect(m.at - now.events()[i].at).toBeGreaterThanOrEqual(1500);
  });

  it('delay=10 delivers nothing earlier than 10 s after the frame’s own ts, and nothing lost; a resume is held the same way', async () => {
    const received: { id: string; ts: string; at: number }[] = [];
    const c = sse(`?game=${soccer2.id}&delay=10`);
    const socket = await ws(`?game=${soccer2.id}&delay=10`);
    const wsArrivals = new Map<string, number>();
    socket.ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'score') wsArrivals.set(f.id, Date.now());
    });
    await c.until((x) => x.of('subscribed').length === 1, 5000, 'subscribed');
    const ids = [await score(soccer2), await score(soccer2), await score(soccer2)];
    await c.until((x) => x.events().length === 3, 15_000, 'delayed events');
    for (const m of c.events()) received.push({ id: m.id, ts: String(m.data.ts), at: m.at });
    expect(received.map((r) => r.id)).toEqual(ids);
    for (const r of received) expect(r.at - Date.parse(r.ts)).toBeGreaterThanOrEqual(10_000);
    await socket.until((x) => x.events().length === 3, 5000, 'ws delayed');
    for (const f of socket.events()) expect(Number(wsArrivals.get(String(f.id))) - Date.parse(String(f.ts))).toBeGreaterThanOrEqual(10_000);
    // Resuming with a delay: events already older than the delay come at once, in order.
    const resumed = await readRaw(`${base}/v1/stream?game=${soccer2.id}&delay=10`, { ...sseHeaders(), 'last-event-id': ids[0] }, (x) => x.includes(ids[2]), 5000);
    expect([...resumed.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1])).toEqual(ids.slice(1));
  });
});
