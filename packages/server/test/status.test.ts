import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inBrowser, launchBrowser } from './browser.js';
import { auth, listen, testApp, type TestApp } from './helpers.js';

describe('public status page', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await testApp();
    base = (await listen(t)).http;
  });
  afterAll(async () => t.close());

  it('reports per-sport feed health without a key', async () => {
    const before = (await (await fetch(`${base}/v1/status`)).json()).data;
    expect(before.sports.map((s: { sport: string }) => s.sport)).toEqual(['soccer', 'basketball', 'tennis', 'golf', 'mma']);
    expect(before.sports.every((s: { status: string }) => s.status === 'idle')).toBe(true);
    const key = await t.key();
    const game = (await t.app.inject({ url: '/v1/games?date=today&sport=basketball&limit=1', headers: auth(key) })).json().data[0];
    const res = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: { ...auth(key), 'content-type': 'application/json' }, payload: JSON.stringify({ game_id: game.id, team: game.competitors[0].entity_id.split(':').pop(), points: 2 }) });
    expect(res.statusCode).toBe(202);
    const after = (await (await fetch(`${base}/v1/status`)).json()).data;
    const bb = after.sports.find((s: { sport: string }) => s.sport === 'basketball');
    expect(bb).toMatchObject({ status: 'operational', live_games: 1, events_last_5m: 1 });
    // The key is never needed, and a bad one does not matter either: the page shows no data.
    // Bodies are read to the end: a response left unread keeps its connection busy and app.close() waiting.
    const withBadKey = await fetch(`${base}/v1/status`, { headers: auth('svc_test_wrongwrongwrongwrongwrong') });
    expect(withBadKey.status).toBe(200);
    await withBadKey.arrayBuffer();
    const unknownParam = await fetch(`${base}/v1/status?x=1`);
    expect(unknownParam.status).toBe(400);
    await unknownParam.arrayBuffer();
  });

  it('renders in a real browser', async (ctx) => {
    const browser = inBrowser(ctx, await launchBrowser());
    try {
      const page = await browser.newPage();
      // The current status comes inside the page and is drawn before its load event: no waiting.
      const res = await page.goto(`${base}/status`);
      expect(await res?.text()).toMatch(/<script type="application\/json" id="initial-status">\{"data":\{"status":/);
      expect(await page.title()).toBe('svc status');
      expect(await page.locator('#overall').textContent()).toMatch(/operational|degraded/);
      expect(await page.locator('tr[data-sport]').count()).toBe(5);
      expect(await page.locator('tr[data-sport="basketball"] td').nth(1).textContent()).toBe('operational');
    } finally {
      await browser.close();
    }
  });
});
