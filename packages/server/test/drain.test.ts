import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from './ws-client.js';
import { auth, testApp } from './helpers.js';
import { startReceiver } from './webhook-receiver.js';
import { confirmedGoal } from './event-fixtures.js';
import { seededDataDir, startSvc, type SvcProcess } from './process.js';

const KEY = 'svc_test_DrainDrainDrainDrainDrain0001';

// Generous deadlines to fail on, not timings: the contract is "exits within 10 s".
const EXIT_DEADLINE_MS = 20_000;

async function exitWithin(p: SvcProcess, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  const r = await Promise.race([p.exited, late]);
  clearTimeout(timer);
  return r;
}

describe('svc serve: SIGTERM drain (real process)', () => {
  let proc: SvcProcess | null = null;
  afterEach(() => {
    proc?.signal('SIGKILL');
    proc = null;
  });

  it('closes a connected stream client with 1001 and exits', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    const client = await connect(`ws://127.0.0.1:${port}/v1/stream?sport=soccer`, KEY);
    await client.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    proc.signal('SIGTERM');
    const exit = await exitWithin(proc, EXIT_DEADLINE_MS);
    expect(exit).toEqual({ code: 0, signal: null });
    await client.until((c) => c.closeCode !== null, 5_000, 'close frame');
    expect(client.closeCode).toBe(1001);
  });

  it('refuses a stream upgrade sent in the first 100 ms after SIGTERM before upgrading it: 503 draining, the documented body', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    // An open connection keeps the listener up for keep-alive answers during the drain's first half second.
    const client = await connect(`ws://127.0.0.1:${port}/v1/stream?sport=soccer`, KEY);
    await client.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    proc.signal('SIGTERM');
    await new Promise((r) => setTimeout(r, 50));
    const refused: unknown = await connect(`ws://127.0.0.1:${port}/v1/stream?sport=soccer`, KEY).then(
      (late) => {
        late.close();
        return 'upgraded';
      },
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ status: 503, body: { error: { type: 'unavailable', code: 'draining' } } });
    expect(await exitWithin(proc, EXIT_DEADLINE_MS)).toEqual({ code: 0, signal: null });
  });
});

describe('svc serve: SIGTERM under keep-alive traffic (real process)', () => {
  let proc: SvcProcess | null = null;
  afterEach(() => {
    proc?.signal('SIGKILL');
    proc = null;
  });

  it('answers every request sent on an open keep-alive connection; only new connections are refused', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    /** One GET on the agent's connections: its status, or how it failed and whether its connection was a reused one. */
    const get = () =>
      new Promise<{ status?: number; error?: string; reused: boolean }>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/v1/me', agent, headers: auth(KEY) }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, reused: req.reusedSocket }));
        });
        req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message, reused: req.reusedSocket }));
      });
    const results: { status?: number; error?: string; reused: boolean }[] = [];
    let stop = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const r = await get();
        results.push(r);
        if (r.error === 'ECONNREFUSED') return;
        // Gaps between requests leave connections idle now and then, as real clients do.
        await new Promise((done) => setTimeout(done, Math.random() * 20));
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    const before = results.length;
    proc.signal('SIGTERM');
    const exit = await exitWithin(proc, EXIT_DEADLINE_MS);
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(results.length).toBeGreaterThan(before);
    // A request on a connection the server had open is answered (200, or 503 while draining).
    // New connections may be refused, or reset when they were still in the listen backlog as the
    // listener closed: no request of theirs was read, and a client retries them elsewhere.
    const failedOnOpenConnections = results.filter((r) => r.error !== undefined && r.reused);
    expect(failedOnOpenConnections).toEqual([]);
    expect(results.filter((r) => r.status !== undefined && r.status !== 200 && r.status !== 503)).toEqual([]);
  });
});

/** Completes the WebSocket handshake and then never reads again: a client that will not answer a close frame. */
async function stuckClient(port: number, key: string): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(
    `GET /v1/stream?sport=soccer HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${key}\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();
  return socket;
}

describe('svc serve: SIGTERM with clients that do not cooperate (real process)', () => {
  let proc: SvcProcess | null = null;
  const sockets: net.Socket[] = [];
  afterEach(() => {
    proc?.signal('SIGKILL');
    proc = null;
    for (const s of sockets.splice(0)) s.destroy();
  });

  it('cuts a stream client that never answers the close frame and still exits 0', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    sockets.push(await stuckClient(port, KEY));
    proc.signal('SIGTERM');
    expect(await exitWithin(proc, EXIT_DEADLINE_MS)).toEqual({ code: 0, signal: null });
    expect(proc.logs().map((l) => l.msg)).toEqual(expect.arrayContaining(['draining', 'drained']));
  });

  it('exits at once (code 1) on a second SIGTERM during the drain', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    sockets.push(await stuckClient(port, KEY));
    proc.signal('SIGTERM');
    // The drain has begun (and waits for the stuck client) before the second signal is sent.
    await proc.line('stdout', /"msg":"draining"/);
    proc.signal('SIGTERM');
    expect(await exitWithin(proc, EXIT_DEADLINE_MS)).toEqual({ code: 1, signal: null });
    const msgs = proc.logs().map((l) => l.msg);
    expect(msgs).toContain('second signal: exiting now');
    expect(msgs).not.toContain('drained');
  });
});

describe('drain: webhook attempts in flight', () => {
  it('are released for another worker when they outlive the grace: due now, the next attempt a new number (never the same delivery and attempt twice)', async () => {
    const t = await testApp({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 60_000 } });
    const rx = await startReceiver();
    try {
      const key = await t.key();
      const games = (await t.app.inject({ url: '/v1/games?date=today&sport=soccer&limit=1', headers: auth(key) })).json().data;
      const game = games[0];
      const team = String(game.competitors[0].entity_id).split(':').pop() ?? '';
      const hook = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth(key), payload: { url: `${rx.url}/hang`, tier: 'confirmed' } });
      expect(hook.statusCode, hook.body).toBe(201);
      const competition = (await t.app.inject({ url: `/v1/competitions/${game.competition_id}`, headers: auth(key) })).json().data;
      await t.services.events.append([confirmedGoal({ ...game, season_id: competition.season_id, team }, new Date().toISOString())]);
      t.services.webhooks.dispatcher.start();
      await rx.waitFor((r) => r.requests.length === 1, 10_000, 'the attempt to reach the receiver');
      const held = await t.db.kysely.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      expect(held).toMatchObject({ status: 'pending', attempts: 1 });
      expect(held.claim_token).not.toBeNull();

      await t.services.webhooks.dispatcher.stop(100);
      const released = await t.db.kysely.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      // The request had left: the attempt stays counted, so the next one is a new attempt number.
      expect(released).toMatchObject({ id: held.id, status: 'pending', attempts: 1, claim_token: null });
      expect(Date.parse(String(released.next_attempt_at))).toBeLessThanOrEqual(Date.now());

      t.services.webhooks.dispatcher.start();
      await rx.waitFor((r) => r.requests.length === 2, 10_000, 'the next attempt');
      expect(rx.header('x-svc-delivery-id')).toEqual([held.id, held.id]);
      expect(rx.header('x-svc-attempt')).toEqual(['1', '2']);
      await t.services.webhooks.dispatcher.stop(100);
    } finally {
      await rx.close();
      await t.close();
    }
  });
});
