import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { APIConnectionError, NotFoundError, Svc, USER_AGENT, VERSION, type ClientOptions, type Logger, type RequestOptions } from '../src/index.js';
import { Stub } from './stub.js';

const SECRET_KEY = 'svc_test_SECRETKEY0123456789';
const WEBHOOK_SECRET = 'whsec_SECRETSECRET0123456789';

/** A logger that keeps its lines by level. */
function recorder(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function withEnv(name: string, value: string | undefined, run: () => void): void {
  const saved = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    run();
  } finally {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  }
}

describe('logging: one line per call, never a secret (stub server)', () => {
  const stub = new Stub();
  beforeAll(() => stub.start());
  afterEach(() => {
    stub.hits = [];
    stub.script = [];
  });
  afterAll(() => stub.close());

  const client = (opts: ClientOptions = {}) => new Svc({ apiKey: SECRET_KEY, baseUrl: stub.url, ...opts });

  it('logs nothing by default, for a success or an error', async () => {
    const log = recorder();
    let svc: Svc | undefined;
    withEnv('SVC_LOG', undefined, () => {
      svc = client({ logger: log });
    });
    expect(svc?.logLevel).toBe('warn');
    await svc?.me();
    stub.script = [{ status: 404, body: { error: { type: 'not_found', code: 'resource_not_found', message: 'no' } } }];
    await expect(svc?.teams.get('team:wc:ZZZ')).rejects.toBeInstanceOf(NotFoundError);
    expect(log.lines).toEqual([]);
  });

  it("at 'info', one line per call with method, path, status, duration and request id; an error answer too", async () => {
    const log = recorder();
    const svc = client({ logLevel: 'info', logger: log });
    await svc.teams.get('team:wc:ARG');
    stub.script = [{ status: 404, body: { error: { type: 'not_found', code: 'resource_not_found', message: 'no' } } }];
    await svc.teams.get('team:wc:ZZZ').catch(() => undefined);
    expect(log.lines.map((l) => l.level)).toEqual(['info', 'info']);
    expect(log.lines[0].message).toMatch(/^svc GET \/v1\/teams\/team%3Awc%3AARG 200 \d+ms request_id=req_stub1$/);
    expect(log.lines[1].message).toMatch(/^svc GET \/v1\/teams\/team%3Awc%3AZZZ 404 \d+ms request_id=req_stub2$/);
  });

  it("at 'debug', a line per retried attempt as well; 'info' says how many attempts the call took", async () => {
    const log = recorder();
    const svc = client({ logLevel: 'debug', logger: log });
    stub.script = [{ status: 503, body: { error: { type: 'unavailable', code: 'store_unavailable', message: 'down' } } }, 'destroy'];
    await svc.me();
    expect(log.lines.map((l) => l.level)).toEqual(['debug', 'debug', 'info']);
    expect(log.lines[0].message).toMatch(/^svc GET \/v1\/me attempt 1 503 \d+ms request_id=req_stub1; retrying in 0\.\d\d s$/);
    expect(log.lines[1].message).toMatch(/^svc GET \/v1\/me attempt 2 failed \d+ms \(APIConnectionError: .*\); retrying in \d\.\d\d s$/);
    expect(log.lines[2].message).toMatch(/^svc GET \/v1\/me 200 \d+ms request_id=req_stub3 attempts=3$/);
  });

  it('never logs the API key, the Authorization header, a query or a body, even at debug', async () => {
    const log = recorder();
    const svc = client({ logLevel: 'debug', logger: log, defaultHeaders: { 'x-extra-secret': 'hdr-secret-1' } });
    stub.script = [{ status: 503, body: {} }, { status: 201, body: { data: { id: 'we_1', secret: WEBHOOK_SECRET } } }];
    const ep = await svc.webhooks.create({ url: 'https://example.com/hook?token=url-secret-1', tier: 'confirmed' });
    expect(ep).toMatchObject({ secret: WEBHOOK_SECRET });
    await svc.players.list({ search: 'query-secret-1' });
    stub.script = ['destroy', 'destroy', 'destroy'];
    await expect(svc.me()).rejects.toBeInstanceOf(APIConnectionError);
    const text = log.lines.map((l) => l.message).join('\n');
    expect(log.lines.length).toBeGreaterThanOrEqual(5);
    for (const secret of [SECRET_KEY, 'Bearer', 'authorization', WEBHOOK_SECRET, 'url-secret-1', 'query-secret-1', 'hdr-secret-1']) expect(text).not.toContain(secret);
    expect(text).toMatch(/svc POST \/v1\/webhooks 201 /);
    expect(text).toMatch(/svc GET \/v1\/players 200 /);
  });

  it('SVC_LOG=debug turns logging on without code; an explicit logLevel wins; a bad SVC_LOG is said once', async () => {
    const log = recorder();
    withEnv('SVC_LOG', 'debug', () => {
      expect(client({ logger: log }).logLevel).toBe('debug');
      expect(client({ logger: log, logLevel: 'off' }).logLevel).toBe('off');
    });
    withEnv('SVC_LOG', 'loud', () => {
      expect(client({ logger: log }).logLevel).toBe('warn');
    });
    expect(log.lines).toEqual([{ level: 'warn', message: expect.stringMatching(/SVC_LOG=loud is not a log level/) }]);
    // @ts-expect-error: not a level
    expect(() => client({ logLevel: 'verbose' })).toThrow(RangeError);
  });

  it('logs to console by default', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    try {
      await client({ logLevel: 'info' }).me();
      expect(info).toHaveBeenCalledTimes(1);
      expect(String(info.mock.calls[0][0])).toMatch(/^svc GET \/v1\/me 200 /);
    } finally {
      info.mockRestore();
    }
  });
});

describe('User-Agent and per-request options (stub server)', () => {
  const stub = new Stub();
  beforeAll(() => stub.start());
  afterEach(() => {
    stub.hits = [];
    stub.script = [];
  });
  afterAll(() => stub.close());

  it('sends User-Agent svc-client-node/<version>, the version being package.json’s', async () => {
    const pkg: { version: string } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../package.json'), 'utf8'));
    expect(VERSION).toBe(pkg.version);
    expect(USER_AGENT).toBe(`svc-client-node/${pkg.version}`);
    await new Svc({ apiKey: 'k', baseUrl: stub.url }).me();
    expect(stub.hits[0].headers['user-agent']).toBe(`svc-client-node/${pkg.version}`);
  });

  it('header names are case-insensitive: a caller’s User-Agent replaces the client’s, a per-request header replaces a default one', async () => {
    const svc = new Svc({ apiKey: 'k', baseUrl: stub.url, defaultHeaders: { 'User-Agent': 'my-app/2.0', 'X-Team': 'default' } });
    await svc.me();
    await svc.me({ headers: { 'x-team': 'this-call', 'USER-AGENT': 'my-app/2.1' } });
    expect(stub.hits.map((h) => [h.headers['user-agent'], h.headers['x-team']])).toEqual([
      ['my-app/2.0', 'default'],
      ['my-app/2.1', 'this-call'],
    ]);
  });

  it('sends the User-Agent on the stream’s WebSocket upgrade too', async () => {
    let seen: string | undefined;
    const server = http.createServer();
    server.on('upgrade', (req, socket) => {
      seen = req.headers['user-agent'];
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    try {
      const stream = new Svc({ apiKey: 'k', baseUrl: `http://127.0.0.1:${addr.port}` }).stream({}, { maxReconnects: 0 });
      await expect(stream[Symbol.asyncIterator]().next()).rejects.toThrow();
      expect(seen).toBe(USER_AGENT);
    } finally {
      server.close();
    }
  });

  it('every method takes the per-request options as its last argument', async () => {
    const svc = new Svc({ apiKey: 'k', baseUrl: stub.url });
    const calls: [string, (o: RequestOptions) => PromiseLike<unknown> | AsyncIterable<unknown>][] = [
      ['me', (o) => svc.me(o)],
      ['teams.list', (o) => svc.teams.list({}, o)],
      ['teams.get', (o) => svc.teams.get('t', o)],
      ['teams.roster', (o) => svc.teams.roster('t', {}, o)],
      ['players.list', (o) => svc.players.list({}, o)],
      ['players.get', (o) => svc.players.get('p', o)],
      ['venues.list', (o) => svc.venues.list({}, o)],
      ['venues.get', (o) => svc.venues.get('v', o)],
      ['seasons.list', (o) => svc.seasons.list({}, o)],
      ['competitions.list', (o) => svc.competitions.list({}, o)],
      ['competitions.get', (o) => svc.competitions.get('c', o)],
      ['competitions.plays', (o) => svc.competitions.plays('c', {}, o)],
      ['games.list', (o) => svc.games.list({}, o)],
      ['games.get', (o) => svc.games.get('g', o)],
      ['games.events', (o) => svc.games.events('g', {}, o)],
      ['reports.create', (o) => svc.reports.create({ game_id: 'g', team: 'T', points: 1 }, o)],
      ['plays.create', (o) => svc.plays.create('c', { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: 't', event_type: 'goal', points: 1 }, o)],
      ['webhooks.create', (o) => svc.webhooks.create({ url: 'https://example.com/h', tier: 'confirmed' }, o)],
      ['webhooks.list', (o) => svc.webhooks.list({}, o)],
      ['webhooks.get', (o) => svc.webhooks.get('w', o)],
      ['webhooks.update', (o) => svc.webhooks.update('w', { description: 'd' }, o)],
      ['webhooks.delete', (o) => svc.webhooks.delete('w', o)],
      ['webhooks.deliveries', (o) => svc.webhooks.deliveries('w', {}, o)],
      ['webhooks.delivery', (o) => svc.webhooks.delivery('w', 'd', o)],
      ['webhooks.replay', (o) => svc.webhooks.replay('w', { delivery_id: 'd' }, o)],
      ['webhooks.enable', (o) => svc.webhooks.enable('w', o)],
      ['webhooks.rotateSecret', (o) => svc.webhooks.rotateSecret('w', o)],
      ['webhooks.test', (o) => svc.webhooks.test('w', o)],
      ['notifications.list', (o) => svc.notifications.list({}, o)],
      ['export', (o) => svc.export({ league: 'wc', season: '2022' }, o)],
    ];
    for (const [name, call] of calls) {
      const pending = call({ headers: { 'x-probe': name }, idempotencyKey: `key-${name}`, maxRetries: 0, timeoutMs: 5_000 });
      if (Symbol.asyncIterator in pending) {
        // The stub's answer is no NDJSON; only the request matters here.
        await (async () => {
          for await (const _ of pending) break;
        })().catch(() => undefined);
      } else await pending;
    }
    expect(stub.hits.map((h) => h.headers['x-probe'])).toEqual(calls.map(([name]) => name));
    for (const h of stub.hits) expect(h.headers['idempotency-key']).toBe(h.method === 'POST' ? `key-${h.headers['x-probe']}` : undefined);
  });
});
