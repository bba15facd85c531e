import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SCHEMA, PLAY_SCHEMA, STREAM_CLOSE_CODES } from '@svc/schema';
import { collectPageErrors, DESKTOP, horizontalOverflow, inBrowser, launchBrowser, PHONE, screenshot } from './browser.js';
import { auth, listen, sleep, testApp, tmpDir, until, type TestApp } from './helpers.js';

interface Game {
  id: string;
  sport: string;
  status: string;
  competitors: { entity_id: string; role: string }[];
}

interface Received {
  id: string;
  type: string;
  game_id?: string;
}

/** What the pages of these tests collect, read back with page.evaluate. */
type Collector = 'sse' | 'ws' | 'again' | 'websocket';
declare global {
  interface Window {
    sse?: Received[];
    ws?: Received[];
    again?: Received[];
    websocket?: Received[];
    sseOpens?: number[];
  }
}

/**
 * The stream from a real browser (Debian's Chromium through playwright-core): its own EventSource
 * and WebSocket with a stream token, the TypeScript client's stream loaded as ES modules by a page
 * of another origin, and the demo scoreboard. Skipped where Chromium is missing, required in CI.
 */
describe('the stream in a browser', () => {
  let browser: Browser | null = null;
  let t: TestApp;
  let base: string;
  let liveKey: string;
  let soccer: Game;
  let soccer2: Game;
  const sockets = new Set<Socket>();
  let n = 0;

  beforeAll(async () => {
    // Without Chromium each test is skipped by inBrowser (failed under CI); the app is built anyway.
    browser = await launchBrowser();
    t = await testApp({ streamLimits: { keyCheckMs: 200 } });
    ({ http: base } = await listen(t));
    t.app.server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    liveKey = await t.key({ products: ['live'] });
    const games = (await t.app.inject({ url: '/v1/games?date=today&limit=1000', headers: auth(liveKey) })).json().data as Game[];
    [soccer, soccer2] = games.filter((g) => g.sport === 'soccer');
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const home = (g: Game) => String(g.competitors.find((c) => c.role === 'home')?.entity_id.split(':').pop());
  /** A provisional event, from a reporter of its own (one key has at most two lone candidates open per game). */
  const score = async (g: Game): Promise<string> => {
    const res = await fetch(`${base}/v1/reports`, {
      method: 'POST',
      headers: { ...auth(await t.key({ products: ['report'] })), 'content-type': 'application/json' },
      body: JSON.stringify({ game_id: g.id, team: home(g), points: 1, observed_at: new Date(Date.now() - 40_000 * ++n).toISOString() }),
    });
    expect(res.status).toBe(202);
    return (await res.json()).data[0].event_id;
  };
  const mint = async (body: unknown): Promise<string> => {
    const res = await fetch(`${base}/v1/stream/tokens`, { method: 'POST', headers: { ...auth(liveKey), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return (await res.json()).data.token;
  };
  const received = (page: Page, name: Collector) => page.evaluate((k) => window[k] ?? [], name);

  it('Chromium’s EventSource and WebSocket with a token narrowed to one game: only that game, and a resume after the server drops the connection loses nothing', async (ctx) => {
    const b = inBrowser(ctx, browser);
    const tok = await mint({ games: [soccer.id] });
    const page = await b.newPage();
    const errors = collectPageErrors(page);
    // A page of svc's origin (its CSP allows connections to 'self' only).
    await page.goto(`${base}/dashboard`);
    await page.evaluate((token) => {
      const sse: Received[] = [];
      const opens: number[] = [];
      window.sse = sse;
      window.sseOpens = opens;
      const es = new EventSource(`/v1/stream?token=${token}`);
      es.addEventListener('open', () => opens.push(Date.now()));
      for (const type of ['score', 'score_retracted', 'subscribed']) {
        es.addEventListener(type, (m) => {
          const frame = JSON.parse(m.data) as Received;
          sse.push({ ...frame, id: m.lastEventId || frame.type, type });
        });
      }
      const wsFrames: Received[] = [];
      window.ws = wsFrames;
      const ws = new WebSocket(`ws://${location.host}/v1/stream?token=${token}`);
      ws.addEventListener('message', (m) => wsFrames.push(JSON.parse(String(m.data)) as Received));
    }, tok);
    await until(async () => (await received(page, 'ws')).some((f) => f.type === 'subscribed') && (await received(page, 'sse')).length > 0, 10_000, 'both subscribed');
    const mine = [await score(soccer), await score(soccer2), await score(soccer)].filter((_, i) => i !== 1);
    await until(async () => (await received(page, 'sse')).filter((m) => m.type === 'score').length === 2, 10_000, 'two events over SSE');
    await until(async () => (await received(page, 'ws')).filter((m) => m.type === 'score').length === 2, 10_000, 'two events over WS');
    // The server side drops every connection: EventSource reconnects by itself with Last-Event-ID.
    for (const s of sockets) s.destroy();
    await sleep(100);
    mine.push(await score(soccer2), await score(soccer), await score(soccer));
    mine.splice(2, 1);
    await until(async () => (await received(page, 'sse')).filter((m) => m.type === 'score').length === 4, 15_000, 'the gap over SSE');
    await sleep(300);
    const sse = (await received(page, 'sse')).filter((m) => m.type === 'score');
    expect(sse.map((m) => m.id)).toEqual(mine);
    expect(sse.every((m) => m.game_id === soccer.id)).toBe(true);
    expect(await page.evaluate(() => window.sseOpens?.length)).toBe(2);
    const ws = (await received(page, 'ws')).filter((m) => m.type === 'score');
    expect(ws.map((f) => f.id)).toEqual(mine.slice(0, 2));
    // The WebSocket resumes with since=<last id it saw>, from the browser too.
    await page.evaluate(
      ({ token, since }) => {
        const again: Received[] = [];
        window.again = again;
        const ws2 = new WebSocket(`ws://${location.host}/v1/stream?token=${token}&since=${since}`);
        ws2.addEventListener('message', (m) => again.push(JSON.parse(String(m.data)) as Received));
      },
      { token: tok, since: ws[ws.length - 1].id },
    );
    await until(async () => (await received(page, 'again')).filter((m) => m.type === 'score').length === 2, 10_000, 'the WebSocket’s resume');
    expect((await received(page, 'again')).filter((m) => m.type === 'score').map((f) => f.id)).toEqual(mine.slice(2));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the TypeScript client’s stream in a page of another origin, with a token, over SSE and over WebSocket', async (ctx) => {
    const b = inBrowser(ctx, browser);
    const dir = transpileClient();
    const server = http.createServer((req, res) => {
      const file = path.join(dir, path.normalize(req.url ?? '/').replace(/^(\.\.[/\\])+/, ''));
      if (req.url === '/' || !fs.existsSync(file)) {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>a web developer’s page</title>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    try {
      const page = await b.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`http://127.0.0.1:${address.port}/`);
      const tok = await mint({ games: [soccer2.id] });
      // A module script of the page, as a web developer writes it (a string: the test runner must not rewrite its import).
      await page.addScriptTag({
        type: 'module',
        content: `
          import { connectStream } from '/index.js';
          for (const transport of ['sse', 'websocket']) {
            const got = [];
            window[transport] = got;
            // The token comes from "the back end" through a function: called again when one expires.
            const stream = connectStream({ baseUrl: ${JSON.stringify(base)}, token: async () => ${JSON.stringify(tok)}, transport }, {});
            (async () => { for await (const ev of stream) got.push(ev); })();
          }
        `,
      });
      await sleep(1000);
      const ids = [await score(soccer2), await score(soccer), await score(soccer2)].filter((_, i) => i !== 1);
      await until(async () => (await received(page, 'sse')).length === 2 && (await received(page, 'websocket')).length === 2, 15_000, 'events through the client');
      expect((await received(page, 'sse')).map((e) => e.id)).toEqual(ids);
      expect((await received(page, 'websocket')).map((e) => e.id)).toEqual(ids);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      server.close();
    }
  });

  it('the demo scoreboard: today’s games and live events, with no key in the page', async (ctx) => {
    const b = inBrowser(ctx, browser);
    const page = await b.newPage({ viewport: DESKTOP });
    const errors = collectPageErrors(page);
    const requests: { url: string; headers: Record<string, string> }[] = [];
    page.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
    await page.goto(`${base}/demo`);
    await page.waitForSelector('#link-state.ok', { timeout: 15_000 });
    expect(await page.locator('#board tr[data-game]').count()).toBeGreaterThan(0);
    await sleep(300);
    const id = await score(soccer);
    await page.waitForSelector(`#ticker li[data-event="${id}"]`, { timeout: 10_000 });
    // The page holds no API key and sends none: its requests carry no Authorization, its stream a token.
    const html = await page.content();
    expect(html).not.toMatch(/svc_(test|live)_/);
    expect(requests.every((r) => !('authorization' in r.headers))).toBe(true);
    expect(requests.some((r) => /\/v1\/stream\?token=sst_/.test(r.url))).toBe(true);
    await screenshot(page, 'demo-desktop');
    // A phone: nothing wider than the screen.
    await page.setViewportSize(PHONE);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'demo-mobile');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the demo in production', () => {
  it('is not served: every demo route is a 404, and no demo key is created', async () => {
    const p = await testApp({ config: { env: 'production' } });
    try {
      for (const [method, url] of [
        ['GET', '/demo'],
        ['GET', '/ui/scoreboard.js'],
        ['POST', '/demo/token'],
        ['GET', '/demo/games'],
      ] as const) {
        const res = await p.app.inject({ method, url });
        expect(res.statusCode, url).toBe(404);
      }
      expect((await p.services.keys.list()).map((k) => k.name)).not.toContain('demo scoreboard (sandbox, live only)');
    } finally {
      await p.close();
    }
  });
});

/**
 * The client's sources as browser ES modules in a temporary directory, each file transpiled as
 * it is; `schema.ts` (types from @svc/schema plus three constants) becomes those constants.
 */
function transpileClient(): string {
  const src = fileURLToPath(new URL('../../client/src/', import.meta.url));
  const out = tmpDir('svc-client-browser-');
  for (const file of fs.readdirSync(src).filter((f) => f.endsWith('.ts'))) {
    const js =
      file === 'schema.ts'
        ? `export const EVENT_SCHEMA = ${JSON.stringify(EVENT_SCHEMA)};\nexport const PLAY_SCHEMA = ${JSON.stringify(PLAY_SCHEMA)};\nexport const STREAM_CLOSE_CODES = ${JSON.stringify(STREAM_CLOSE_CODES)};\n`
        : ts.transpileModule(fs.readFileSync(path.join(src, file), 'utf8'), { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 } }).outputText;
    fs.writeFileSync(path.join(out, file.replace(/\.ts$/, '.js')), js);
  }
  return out;
}
