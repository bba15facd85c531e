import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket, WebSocketServer } from 'ws';
import { EventSource } from 'eventsource';
import { ManualClock, until } from '../../server/test/helpers.js';
import {
  AuthenticationError,
  PermissionDeniedError,
  RateLimitError,
  SchemaMismatchError,
  Svc,
  connectStream,
  type EventStream,
  type WireEvent,
} from '../src/index.js';
import { goalPlays, liveSvc, SvcProcess, type LiveSvc } from './support.js';

const evt = (n: number, over: Record<string, unknown> = {}) => ({
  id: `evt_${String(n).padStart(12, '0')}`,
  type: 'score',
  tier: 'confirmed',
  game_id: 'soccer_1',
  team: 'ARG',
  points: 1,
  ts: new Date().toISOString(),
  confidence: { agreement: 1, reporters: 3, latency_ms: 5 },
  schema: 'svc.event.v1',
  ...over,
});
const subscribed = (recovered = false) => JSON.stringify({ type: 'subscribed', recovered, sports: [], leagues: [], games: [], tier: null });

/** Reads a stream into `out` until it ends; resolves with the error it ended with, if any. */
function drain(stream: EventStream, out: WireEvent[]): Promise<unknown> {
  return (async () => {
    for await (const ev of stream) out.push(ev);
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** A WebSocket server of the test's own whose connections a script drives. */
async function stubWs(onConnection: (socket: WsWebSocket, n: number, url: URL) => void) {
  const urls: URL[] = [];
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    urls.push(url);
    onConnection(socket, urls.length - 1, url);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  return {
    baseUrl: `http://127.0.0.1:${addr.port}`,
    urls,
    server,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('stream against stub WebSocket servers', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it('throws SchemaMismatchError on an event whose schema is not svc.event.v1, and does not reconnect', async () => {
    const stub = await stubWs((socket) => {
      socket.send(subscribed());
      socket.send(JSON.stringify({ type: 'heartbeat' }));
      socket.send(JSON.stringify(evt(1)));
      socket.send(JSON.stringify(evt(2, { schema: 'svc.event.v2' })));
    });
    closers.push(stub.close);
    const out: WireEvent[] = [];
    const err = await drain(new Svc({ apiKey: 'svc_test_x', baseUrl: stub.baseUrl }).stream(), out);
    expect(err).toBeInstanceOf(SchemaMismatchError);
    expect(err).toMatchObject({ expected: 'svc.event.v1', received: 'svc.event.v2' });
    expect(out.map((e) => e.id)).toEqual([evt(1).id]);
    expect(stub.urls).toHaveLength(1);
  });

  it('resumes after 4008 and after a dead link with since=<last id>; each event once, in order; control frames never yielded', async () => {
    const script: ((s: WsWebSocket) => void)[] = [
      (s) => {
        s.send(subscribed());
        for (const n of [1, 2, 3]) s.send(JSON.stringify(evt(n)));
        s.close(4008, 'slow_consumer');
      },
      (s) => {
        s.send(subscribed(true));
        // The replay overlaps what was already seen: the client must skip it.
        for (const n of [2, 3, 4]) s.send(JSON.stringify(evt(n)));
        s.send(JSON.stringify({ type: 'pong' }));
        // Then silence, without a close: a dead link.
      },
      (s) => {
        s.send(subscribed(true));
        s.send(JSON.stringify(evt(5)));
        s.close(1001, 'going away');
      },
      (s) => {
        s.send(subscribed(true));
        s.send(JSON.stringify(evt(6)));
      },
    ];
    const stub = await stubWs((socket, n) => script[n]?.(socket));
    closers.push(stub.close);
    const stream = new Svc({ apiKey: 'svc_test_x', baseUrl: stub.baseUrl }).stream({ game: ['soccer_1', 'soccer_2'], tier: 'confirmed' }, { deadAfterMs: 400 });
    const out: WireEvent[] = [];
    const done = drain(stream, out);
    await until(() => out.length >= 6, 20_000, 'six events');
    stream.close();
    expect(await done).toBeUndefined();
    expect(out.map((e) => Number(e.id.slice(4)))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stub.urls.map((u) => u.searchParams.get('since'))).toEqual([null, evt(3).id, evt(4).id, evt(5).id]);
    expect(stub.urls[0].searchParams.get('game')).toBe('soccer_1,soccer_2');
    expect(stub.urls[0].searchParams.get('tier')).toBe('confirmed');
    expect(stream.lastEventId).toBe(evt(6).id);
  });

  it('4029 ends the stream with RateLimitError without reconnecting', async () => {
    const stub = await stubWs((socket) => socket.close(4029, 'connection limit of the plan reached'));
    closers.push(stub.close);
    const err = await drain(new Svc({ apiKey: 'svc_test_x', baseUrl: stub.baseUrl }).stream(), []);
    expect(err).toBeInstanceOf(RateLimitError);
    await new Promise((r) => setTimeout(r, 300));
    expect(stub.urls).toHaveLength(1);
  });

  it('4401 (key revoked while connected) ends the stream with AuthenticationError without reconnecting', async () => {
    const stub = await stubWs((socket) => socket.close(4401, 'key_revoked'));
    closers.push(stub.close);
    const err = await drain(new Svc({ apiKey: 'svc_test_x', baseUrl: stub.baseUrl }).stream(), []);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
    await new Promise((r) => setTimeout(r, 300));
    expect(stub.urls).toHaveLength(1);
  });

  it('4429 after a rate_limited error frame resumes after its retry_after, with since', async () => {
    let n = 0;
    const stub = await stubWs((socket) => {
      n++;
      if (n === 1) {
        socket.send(JSON.stringify({ type: 'subscribed', recovered: false, sports: [], leagues: [], games: [], tier: null }));
        socket.send(JSON.stringify(evt(1)));
        socket.send(JSON.stringify({ type: 'error', code: 'rate_limited', message: 'slow down', retry_after: 1 }));
        socket.close(4429, 'rate_limited');
        return;
      }
      socket.send(JSON.stringify({ type: 'subscribed', recovered: true, sports: [], leagues: [], games: [], tier: null }));
      socket.send(JSON.stringify(evt(2)));
    });
    closers.push(stub.close);
    const stream = new Svc({ apiKey: 'svc_test_x', baseUrl: stub.baseUrl }).stream();
    const out: WireEvent[] = [];
    const started = Date.now();
    const done = drain(stream, out);
    await until(() => out.length >= 2, 10_000, 'two events');
    const waited = Date.now() - started;
    stream.close();
    await done;
    expect(out.map((e) => e.id)).toEqual([evt(1).id, evt(2).id]);
    expect(stub.urls[1].searchParams.get('since')).toBe(evt(1).id);
    expect(waited).toBeGreaterThanOrEqual(900);
  });

  it('a 401 refusal of the upgrade is AuthenticationError after one attempt; a 503 is retried', async () => {
    let attempts = 0;
    const server = http.createServer();
    server.on('upgrade', (_req, socket) => {
      attempts++;
      const status = attempts === 1 ? 503 : 401;
      const body = JSON.stringify({ error: { type: status === 401 ? 'authentication_error' : 'unavailable', code: status === 401 ? 'invalid_api_key' : 'unavailable', message: 'no', request_id: 'req_x' } });
      socket.end(`HTTP/1.1 ${status} x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const addr = server.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    const err = await drain(new Svc({ apiKey: 'svc_test_x', baseUrl: `http://127.0.0.1:${addr.port}` }).stream(), []);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key', requestId: 'req_x' });
    await new Promise((r) => setTimeout(r, 300));
    expect(attempts).toBe(2);
  });
});

describe('stream against a real svc', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc();
  });
  afterAll(() => s.close());

  const scheduledGame = async (i: number) => {
    const g = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 10 })).data[i];
    return { id: g.id, competition: g.competition_id, competitor: g.competitors[0].entity_id };
  };

  it('401 and 403 refusals surface as AuthenticationError and PermissionDeniedError', async () => {
    const bad = await drain(s.client({ apiKey: 'svc_test_NotARealKeyNotARealKeyNotARealKey' }).stream(), []);
    expect(bad).toBeInstanceOf(AuthenticationError);
    const archiveOnly = await drain(s.client({ apiKey: await s.t.key({ products: ['archive'] }) }).stream(), []);
    expect(archiveOnly).toBeInstanceOf(PermissionDeniedError);
    expect(archiveOnly).toMatchObject({ status: 403, code: 'product_not_in_plan' });
  });

  it('over the plan’s connection limit: RateLimitError (4029)', async () => {
    const free = s.client({ apiKey: await s.t.key({ plan: 'free', products: ['live'] }) });
    let up = 0;
    const open = [free.stream({}, { onSubscribed: () => up++ }), free.stream({}, { onSubscribed: () => up++ })];
    const pending = open.map((st) => drain(st, []));
    await until(() => up >= 2, 10_000, 'two connections');
    const err = await drain(free.stream(), []);
    expect(err).toBeInstanceOf(RateLimitError);
    for (const st of open) st.close();
    expect(await Promise.all(pending)).toEqual([undefined, undefined]);
  });

  it('yields live events; the browser path (standard WebSocket, access_token) works and fails typed', async () => {
    const g = await scheduledGame(3);
    let ready = false;
    const stream = s.svc.stream({ game: g.id }, { WebSocket: WsWebSocket, onSubscribed: () => (ready = true) });
    const out: WireEvent[] = [];
    const done = drain(stream, out);
    await until(() => ready, 10_000, 'subscribed');
    await s.svc.plays.create(g.competition, goalPlays(g.competitor, 2, Date.now()));
    await until(() => out.length >= 2, 10_000, 'two events');
    stream.close();
    expect(await done).toBeUndefined();
    expect(out.every((e) => e.game_id === g.id && e.schema === 'svc.event.v1')).toBe(true);

    const bad = await drain(s.client({ apiKey: 'svc_test_NotARealKeyNotARealKeyNotARealKey' }).stream({}, { WebSocket: WsWebSocket }), []);
    expect(bad).toBeInstanceOf(AuthenticationError);
    const archiveOnly = await drain(s.client({ apiKey: await s.t.key({ products: ['archive'] }) }).stream({}, { WebSocket: WsWebSocket }), []);
    expect(archiveOnly).toBeInstanceOf(PermissionDeniedError);
  });

  it('min_probability leaves out events below it: a lone crowd report’s provisional is not sent, the official goals (1) are', async () => {
    const g = await scheduledGame(4);
    let ready = false;
    const stream = s.svc.stream({ game: g.id, min_probability: 0.999 }, { WebSocket: WsWebSocket, onSubscribed: () => (ready = true) });
    const out: WireEvent[] = [];
    const done = drain(stream, out);
    await until(() => ready, 10_000, 'subscribed');
    // The official goals make the game live; then a key's own lone report, published with a probability below 1.
    await s.svc.plays.create(g.competition, goalPlays(g.competitor, 2, Date.now() - 600_000));
    const reporter = s.client({ apiKey: await s.t.key({ products: ['report'] }) });
    const [named, own] = await reporter.reports.create([
      { game_id: g.id, team: String(g.competitor.split(':').pop()), points: 1, reporter: 'fan-1' },
      { game_id: g.id, team: String(g.competitor.split(':').pop()), points: 1 },
    ]);
    expect(named.event_id).not.toBeNull();
    expect(own.event_id).toBe(named.event_id);
    await until(() => out.length >= 2, 10_000, 'the official goals');
    await new Promise((r) => setTimeout(r, 300));
    stream.close();
    expect(await done).toBeUndefined();
    expect(out.map((e) => (e.type === 'status' ? null : e.confidence.probability))).toEqual([1, 1]);
  });
});

describe('stream tokens through the client', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc({ clock: new ManualClock(Date.now()) });
  });
  afterAll(() => s.close());

  it('svc.stream.tokens.create() mints a token that connectStream uses over SSE and WebSocket, renewed by its function when it expires', async () => {
    const g = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 10 })).data[5];
    const token = await s.svc.stream.tokens.create({ games: [g.id], ttl_s: 60 });
    expect(token).toMatchObject({ games: [g.id], sports: null, leagues: null });
    expect(token.token).toMatch(/^sst_/);
    let minted = 0;
    const fresh = async () => {
      minted++;
      return (await s.svc.stream.tokens.create({ games: [g.id], ttl_s: 60 })).token;
    };
    const up = { sse: 0, websocket: 0 };
    const streams = (['sse', 'websocket'] as const).map((transport) =>
      connectStream({ baseUrl: s.svc.baseUrl, token: fresh, transport, EventSource, onSubscribed: () => up[transport]++ }, { game: g.id }),
    );
    const outs: WireEvent[][] = [[], []];
    const done = streams.map((st, i) => drain(st, outs[i]));
    await until(() => up.sse === 1 && up.websocket === 1, 10_000, 'both subscribed');
    await s.svc.plays.create(g.competition_id, goalPlays(g.competitors[0].entity_id, 1, Date.now()));
    await until(() => outs.every((o) => o.length === 1), 10_000, 'one event each');
    // The service's clock passes the tokens' expiry: the streams end with token_expired, fetch a new token and resume.
    (s.t.clock as ManualClock).advance(61_000);
    await until(() => up.sse === 2 && up.websocket === 2, 15_000, 'both renewed');
    expect(minted).toBeGreaterThanOrEqual(4);
    await s.svc.plays.create(g.competition_id, goalPlays(g.competitors[0].entity_id, 1, Date.now() + 60_000));
    await until(() => outs.every((o) => o.length === 2), 10_000, 'the next event each');
    for (const o of outs) expect(new Set(o.map((e) => e.id)).size).toBe(2);
    for (const st of streams) st.close();
    expect(await Promise.all(done)).toEqual([undefined, undefined]);
    // A fixed token that expired ends the stream with AuthenticationError instead.
    const fixed = connectStream({ baseUrl: s.svc.baseUrl, token: token.token, transport: 'websocket' });
    const err = await drain(fixed, []);
    expect(err).toBeInstanceOf(AuthenticationError);
  });
});

describe('stream survives a SIGKILL and restart of the server', () => {
  const key = `svc_test_${'ClientStreamKill'.padEnd(32, 'x')}`;
  let p: SvcProcess;
  afterAll(() => p?.dispose());

  it('delivers every event exactly once, in order, across the restart', { timeout: 240_000 }, async () => {
    p = await SvcProcess.create(key);
    await p.start();
    const svc = new Svc({ apiKey: key, baseUrl: p.baseUrl, maxRetries: 5 });
    const game = (await svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 1 })).data[0];
    const competitor = game.competitors[0].entity_id;
    const BATCH = 40;
    const plays = goalPlays(competitor, 3 * BATCH, Date.now());
    let subscriptions = 0;
    const stream = svc.stream({ game: game.id, tier: 'confirmed' }, { onSubscribed: () => subscriptions++ });
    const out: WireEvent[] = [];
    const done = drain(stream, out);
    await until(() => subscriptions >= 1, 20_000, 'subscribed');

    await svc.plays.create(game.competition_id, plays.slice(0, BATCH));
    await until(() => out.length >= BATCH / 2, 20_000, 'events before the kill');
    // Written and acknowledged, then the server dies before (all of) its broadcast.
    await svc.plays.create(game.competition_id, plays.slice(BATCH, 2 * BATCH));
    await p.kill();
    const beforeRestart = out.length;
    await p.start();
    await until(() => subscriptions >= 2, 60_000, 'resubscribed after the restart');
    await svc.plays.create(game.competition_id, plays.slice(2 * BATCH));
    await until(() => out.length >= 3 * BATCH, 60_000, `all ${3 * BATCH} events (have ${out.length})`);
    stream.close();
    expect(await done).toBeUndefined();

    const rest = [];
    for await (const e of svc.games.events(game.id, { limit: 1000 })) rest.push(e.id);
    expect(rest).toHaveLength(3 * BATCH);
    expect(out.map((e) => e.id)).toEqual(rest);
    expect(new Set(out.map((e) => e.id)).size).toBe(out.length);
    expect(beforeRestart).toBeLessThanOrEqual(2 * BATCH);
  });
});
