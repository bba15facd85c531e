import fs from 'node:fs';
import path from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Game, Replay, ReportResult, WebhookEndpoint, WebhookEndpointWithSecret } from '@svc/schema';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { openDb } from '../src/store/sql/db.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { collectPageErrors, DESKTOP, focusOutline, horizontalOverflow, inBrowser, launchBrowser, PHONE, screenshot } from './browser.js';
import { serveSvc, type SvcProcess } from './process.js';
import { tmpDir } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

/**
 * The dashboard end to end: a real `svc serve` process, a real webhook receiver, a real browser.
 * Every action is a click; every outcome is checked where it lands (the receiver, the REST API).
 */
describe('dashboard', () => {
  let svc: SvcProcess;
  let rx: Receiver;
  let browser: Browser | null;
  let owner: string;
  let other: string;
  let source: string;
  const reporters: string[] = [];
  const requestedUrls: string[] = [];

  beforeAll(async () => {
    // Keys are made in the database before the start, as an operator does with `svc keys create`.
    const dataDir = tmpDir('svc-dash-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    const db = await openDb({ dataDir, databaseUrl: null });
    const keys = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
    const now = new Date();
    owner = (await keys.create({ name: 'acme', plan: 'pro', products: ['live', 'archive'], sports: null, leagues: null }, now)).key;
    other = (await keys.create({ name: 'rival', plan: 'pro', products: ['live'], sports: null, leagues: null }, now)).key;
    source = (await keys.create({ name: 'official', plan: 'pro', products: ['source'], sports: null, leagues: null }, now)).key;
    for (let i = 0; i < 3; i++) reporters.push((await keys.create({ name: `reporter ${i}`, plan: 'pro', products: ['report'], sports: null, leagues: null }, now)).key);
    await db.close();

    rx = await startReceiver();
    svc = await serveSvc(dataDir, {
      SVC_WEBHOOK_ALLOW_PRIVATE: 'on',
      SVC_WEBHOOK_RETRY_DELAYS: '0,1',
      SVC_WEBHOOK_DISABLE_AFTER_S: '3',
      SVC_WEBHOOK_TIMEOUT_MS: '2000',
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await rx?.close();
  });

  const call = async (method: string, url: string, key: string, input?: unknown) => {
    const res = await fetch(`${svc.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(input !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: input === undefined ? undefined : JSON.stringify(input),
    });
    const body: unknown = await res.json();
    return { status: res.status, body };
  };
  /** The `data` of an answer, checked against its shape in @svc/schema: a mismatch fails the test. */
  const dataOf = <T extends TSchema>(schema: T, answer: { body: unknown }): Static<T> => {
    const data = typeof answer.body === 'object' && answer.body !== null && 'data' in answer.body ? answer.body.data : undefined;
    if (!Value.Check(schema, data)) throw new Error(`not the documented shape: ${JSON.stringify(answer.body).slice(0, 300)}`);
    return data;
  };

  async function newPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ viewport, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    page.on('request', (r) => requestedUrls.push(r.url()));
    return { context, page, errors };
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.goto(`${svc.base}/dashboard`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
  }

  const card = (page: Page, id: string) => page.locator(`article[data-endpoint="${id}"]`);
  const arrivals = (path: string, eventId: string) => rx.requests.filter((r) => r.path === path && r.headers['x-svc-event-id'] === eventId).length;

  it('signs in with a key, manages endpoints, shows real deliveries, replays them and brings back an auto-disabled endpoint', { timeout: 180_000 }, async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { context, page, errors } = await newPage(DESKTOP);

    // The pages carry a strict CSP and no inline script or style.
    const doc = await page.goto(`${svc.base}/dashboard`);
    const csp = doc?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = (await doc?.text()) ?? '';
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/svc_(test|live)_[A-Za-z0-9]{16}|whsec_/);
    await screenshot(page, 'dashboard-signin-desktop');
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);

    // A wrong key is refused with the API's own message.
    await page.getByLabel('API key').fill('svc_test_0000000000000000000000000000dead');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#signin-error').textContent()).toMatch(/not valid/);
    // The browser itself logs the refused request; that one is expected, nothing else is.
    expect(errors).toEqual([expect.stringContaining('status of 401')]);
    errors.length = 0;

    await page.getByLabel('API key').fill(owner);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    expect(await page.evaluate(() => sessionStorage.getItem('svc.apiKey'))).toBe(owner);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.locator('#plan').textContent()).toBe('pro');
    expect(await page.locator('#products').textContent()).toBe('live, archive');
    expect(await page.locator('#sports').textContent()).toBe('all');
    await expect.poll(() => page.locator('#rate-usage').textContent()).toMatch(/^\d+ of 1000 used this minute \(resets in \d+ s\)$/);

    // Create an endpoint: the secret is shown once, with a copy button.
    await page.getByLabel('Endpoint URL').fill(`${rx.url}/a`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secretBox = page.locator('#created .secret-value');
    await secretBox.waitFor();
    const secretA = (await secretBox.textContent()) ?? '';
    expect(secretA).toMatch(/^whsec_/);
    await page.locator('#created').getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secretA);
    const list = dataOf(Type.Array(WebhookEndpoint), await call('GET', '/v1/webhooks', owner));
    const epA = list.find((e) => e.url === `${rx.url}/a`);
    expect(epA).toBeDefined();
    const a = epA?.id ?? '';

    const b = dataOf(WebhookEndpointWithSecret, await call('POST', '/v1/webhooks', owner, { url: `${rx.url}/status/500/b`, tier: 'confirmed' })).id;
    const c = dataOf(WebhookEndpointWithSecret, await call('POST', '/v1/webhooks', other, { url: `${rx.url}/c-other`, tier: 'confirmed' })).id;

    // A real confirmed event: three reporters agree on a basket.
    const games = dataOf(Type.Array(Game), await call('GET', '/v1/games?date=today&sport=basketball&limit=1', owner));
    const game = games[0];
    const team = game.competitors[0].entity_id.split(':').pop();
    let confirmedId = '';
    for (const key of reporters) {
      const r = await call('POST', '/v1/reports', key, { game_id: game.id, team, points: 2 });
      expect(r.status).toBe(202);
      const out = dataOf(Type.Array(ReportResult), r)[0];
      if (out.tier === 'confirmed') confirmedId = out.event_id ?? '';
    }
    expect(confirmedId).toMatch(/^evt_/);
    await rx.waitFor(() => arrivals('/a', confirmedId) === 1 && arrivals('/c-other', confirmedId) === 1, 20_000, 'the confirmed event at A and C');

    // The list after a reload (the key survives it in sessionStorage): A and B, never C.
    await page.reload();
    await card(page, b).waitFor();
    expect(await card(page, a).locator('.status-badge').textContent()).toBe('Enabled');
    expect(await page.locator('article.endpoint').count()).toBe(2);
    const body = (await page.locator('body').textContent()) ?? '';
    expect(body).not.toContain(c);
    expect(body).not.toContain('/c-other');
    expect(body).not.toContain(secretA);

    // A's delivery log: the real delivery, its attempt, Replay.
    const cardA = card(page, a);
    await cardA.getByRole('button', { name: 'Delivery log' }).click();
    const delivery = cardA.locator(`li.delivery[data-event="${confirmedId}"]`);
    await delivery.waitFor();
    expect(await delivery.locator('[data-status]').textContent()).toBe('delivered');
    await delivery.getByRole('button', { name: 'Attempts' }).click();
    const attempt = delivery.locator('tr[data-attempt="1"]');
    await attempt.waitFor();
    expect(await attempt.locator('.status-code').textContent()).toBe('200');
    expect(await attempt.locator('.duration').textContent()).toMatch(/^\d+ ms$/);
    expect(await attempt.locator('pre.excerpt').textContent()).toBe('ok');
    await screenshot(page, 'dashboard-desktop');

    await delivery.getByRole('button', { name: 'Replay', exact: true }).click();
    await rx.waitFor(() => arrivals('/a', confirmedId) === 2, 20_000, 'the replayed delivery at A');
    expect(arrivals('/c-other', confirmedId)).toBe(1);
    await expect.poll(() => cardA.locator('li.delivery').count()).toBe(2);

    // Filter by status.
    await cardA.getByLabel('Status').selectOption('failed');
    await expect.poll(() => cardA.locator('.deliveries').textContent()).toContain('No failed deliveries.');
    await cardA.getByLabel('Status').selectOption('delivered');
    await expect.poll(() => cardA.locator('li.delivery').count()).toBe(2);

    // A time-range replay (the last hour, by default).
    await cardA.getByRole('button', { name: 'Replay range' }).click();
    await expect.poll(() => cardA.locator('.delivery-log [role="status"]').textContent()).toBe('Replayed 1 event.');
    await rx.waitFor(() => arrivals('/a', confirmedId) === 3, 20_000, 'the range replay at A');

    // Send test event: signed with the secret the page showed.
    await cardA.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => cardA.locator('.test-result strong').textContent()).toBe('Test event delivered');
    const test = rx.requests.filter((r) => r.path === '/a' && r.headers['x-svc-topic'] === 'event.test').at(-1);
    expect(JSON.parse(test?.body ?? '{}')).toMatchObject({ type: 'test', schema: 'svc.event.v1' });
    expect(verifySignature(String(test?.headers['x-svc-signature']), test?.body ?? '', secretA).ok).toBe(true);

    // Edit sports.
    await cardA.getByRole('button', { name: 'Edit sports' }).click();
    await cardA.getByLabel('basketball').check();
    await cardA.getByRole('button', { name: 'Save sports' }).click();
    await expect.poll(async () => dataOf(WebhookEndpoint, await call('GET', `/v1/webhooks/${a}`, owner)).sports).toEqual(['basketball']);
    await expect.poll(() => card(page, a).textContent()).toContain('sports: basketball');

    // Rotate the secret: confirmed in a dialog, the new one shown once, both sign for a while.
    await card(page, a).getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const newSecret = (await card(page, a).locator('.secret-value').textContent()) ?? '';
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secretA);
    await card(page, a).getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => rx.requests.filter((r) => r.path === '/a' && r.headers['x-svc-topic'] === 'event.test').length).toBe(2);
    const rotated = rx.requests.filter((r) => r.path === '/a' && r.headers['x-svc-topic'] === 'event.test').at(-1);
    expect(verifySignature(String(rotated?.headers['x-svc-signature']), rotated?.body ?? '', newSecret).ok).toBe(true);
    expect(verifySignature(String(rotated?.headers['x-svc-signature']), rotated?.body ?? '', secretA).ok).toBe(true);

    // B answers 500 to everything: after 3 s of failures svc disables it and notifies the owner.
    await expect.poll(async () => dataOf(WebhookEndpoint, await call('GET', `/v1/webhooks/${b}`, owner)).status, { timeout: 30_000 }).toBe('disabled');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => card(page, b).locator('.status-badge').textContent()).toBe('Disabled');
    const note = page.locator('#notifications li[data-type="webhook_endpoint.disabled"]');
    await note.waitFor();
    expect(await note.textContent()).toContain(b);
    await screenshot(page, 'dashboard-disabled-desktop');
    const cardB = card(page, b);
    await cardB.getByRole('button', { name: 'Delivery log' }).click();
    const failed = cardB.locator(`li.delivery[data-event="${confirmedId}"]`);
    await failed.getByRole('button', { name: 'Attempts' }).click();
    await failed.locator('tr[data-attempt="1"]').waitFor();
    expect(await failed.locator('tr[data-attempt="1"] .status-code').textContent()).toBe('500');
    expect(await failed.locator('tr[data-attempt="1"] .error').textContent()).toBe('HTTP 500');
    expect(await failed.locator('tr[data-attempt="1"] pre.excerpt').textContent()).toBe('answer 500');

    // Re-enable: the API reports it enabled again.
    await cardB.getByRole('button', { name: 'Re-enable' }).click();
    await expect.poll(() => card(page, b).locator('.status-badge').textContent()).toBe('Enabled');
    expect(dataOf(WebhookEndpoint, await call('GET', `/v1/webhooks/${b}`, owner)).status).toBe('enabled');

    // Delete with confirmation: Cancel keeps it, Delete removes it.
    await card(page, b).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await call('GET', `/v1/webhooks/${b}`, owner)).status).toBe(200);
    await card(page, b).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
    await card(page, b).waitFor({ state: 'detached' });
    expect((await call('GET', `/v1/webhooks/${b}`, owner)).status).toBe(404);

    // Sign out forgets the key.
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.evaluate(() => sessionStorage.getItem('svc.apiKey'))).toBeNull();
    await page.getByLabel('API key').waitFor();

    expect(errors).toEqual([]);
    // The key went only into headers: never into a URL the browser requested.
    for (const key of [owner, other]) expect(requestedUrls.filter((u) => u.includes(key))).toEqual([]);
    await context.close();
  });

  it('serves only its own files, and svc serve records the status history itself', async () => {
    const page = await fetch(`${svc.base}/dashboard`);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'none'");
    const etag = page.headers.get('etag') ?? '';
    await page.arrayBuffer();
    const again = await fetch(`${svc.base}/dashboard`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    await again.arrayBuffer();
    for (const url of ['/ui/../package.json', '/ui/nothing.js', '/ui/%2e%2e/src/main.ts']) {
      const res = await fetch(`${svc.base}${url}`);
      expect(res.status, url).toBe(404);
      await res.arrayBuffer();
    }
    // The sampler of `svc serve` took its first sample at start.
    const status = (await (await fetch(`${svc.base}/v1/status`)).json()).data;
    expect(status.sports.map((s: { uptime_90d: number | null }) => s.uptime_90d)).toEqual([1, 1, 1, 1, 1]);
    expect(status.sports[0].days.at(-1).uptime).toBe(1);
  });

  it("works with the keyboard alone, and another key sees only its own endpoints", async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { context, page, errors } = await newPage(DESKTOP);
    await page.goto(`${svc.base}/dashboard`);
    // The key field has focus on arrival; Enter signs in.
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('api-key');
    await page.keyboard.type(other);
    await page.keyboard.press('Enter');
    await page.locator('#app-view').waitFor({ state: 'visible' });
    const endpoints = await page.locator('article.endpoint').evaluateAll((els) => els.map((e) => e.getAttribute('data-endpoint')));
    const own = dataOf(Type.Array(WebhookEndpoint), await call('GET', '/v1/webhooks', other));
    expect(endpoints).toEqual(own.map((e) => e.id));
    const text = (await page.locator('body').textContent()) ?? '';
    expect(text).not.toContain(`${rx.url}/a`);
    expect(text).not.toContain('/status/500/b');

    // Tab to "Send test event" and press it; focus is visible on the way.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      expect(await focusOutline(page)).toMatch(/^solid [1-9]/);
      reached = (await page.evaluate(() => document.activeElement?.textContent)) === 'Send test event';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.test-result strong').textContent()).toBe('Test event delivered');
    expect(rx.requests.filter((r) => r.path === '/c-other' && r.headers['x-svc-topic'] === 'event.test')).toHaveLength(1);

    // A key in the API of another's endpoint is a 404, exactly as the dashboard would see it.
    const ownerList = dataOf(Type.Array(WebhookEndpoint), await call('GET', '/v1/webhooks', owner));
    expect((await call('GET', `/v1/webhooks/${ownerList[0].id}/deliveries`, other)).status).toBe(404);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('is readable at 375 px wide', async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { context, page, errors } = await newPage(PHONE);
    await page.goto(`${svc.base}/dashboard`);
    await page.getByLabel('API key').waitFor();
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'dashboard-signin-mobile');
    await signIn(page, owner);
    const first = page.locator('article.endpoint').first();
    await first.getByRole('button', { name: 'Delivery log' }).click();
    await first.locator('li.delivery').first().getByRole('button', { name: 'Attempts' }).click();
    await first.locator('tr[data-attempt]').first().waitFor();
    await screenshot(page, 'dashboard-mobile');
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('*')].filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible').map((e) => `${e.tagName}.${e.className} ${e.scrollWidth} ${e.clientWidth}`),
    );
    expect(wide).toEqual([]);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    const button = await first.getByRole('button', { name: 'Send test event' }).boundingBox();
    expect(button?.height ?? 0).toBeGreaterThanOrEqual(32);
    await screenshot(page, 'dashboard-mobile');
    expect(errors).toEqual([]);
    await context.close();
  });
  it('replays a game: league, season, team and game picked, started at 600×, its status followed to finished; another key sees none of it', async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { context, page, errors } = await newPage(DESKTOP);
    await signIn(page, owner);
    const section = page.locator('#replays-section');
    await section.waitFor({ state: 'visible' });
    await page.getByLabel('League').selectOption('wc');
    await page.getByLabel('Season').selectOption('2022');
    await page.getByLabel('Team').selectOption('ARG');
    await page.getByLabel('Game', { exact: true }).selectOption('soccer_21728');
    await page.getByLabel('Speed').fill('600');
    await page.getByRole('button', { name: 'Start replay' }).click();
    const item = section.locator('li[data-replay]').first();
    await item.locator('[data-status="scheduled"], [data-status="running"]').waitFor();
    await item.locator('[data-status="finished"]').waitFor({ timeout: 60_000 });
    const id = await item.getAttribute('data-replay');
    const replay = dataOf(Replay, await call('GET', `/v1/replays/${id}`, owner));
    expect(replay).toMatchObject({ source_game_id: 'soccer_21728', speed: 600, status: 'finished' });
    expect(dataOf(Game, await call('GET', `/v1/games/${replay.game_id}`, owner))).toMatchObject({ status: 'final' });
    expect((await call('GET', `/v1/games/${String(replay.game_id)}`, other)).status).toBe(404);
    expect(dataOf(Type.Array(Replay), await call('GET', '/v1/replays', other))).toEqual([]);

    // A second one, cancelled from its row: the row keeps it, marked cancelled.
    await page.getByLabel('Speed').fill('1');
    await page.getByRole('button', { name: 'Start replay' }).click();
    const second = section.locator('li[data-replay]').first();
    await second.locator('[data-status="scheduled"], [data-status="running"]').waitFor();
    await second.getByRole('button', { name: 'Cancel' }).click();
    await second.locator('[data-status="cancelled"]').waitFor();
    await screenshot(page, 'dashboard-replays');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a competition's status history: each change with its reason, the status now and the first announced start", async (ctx) => {
    browser = inBrowser(ctx, browser);
    const games = dataOf(Type.Array(Game), await call('GET', '/v1/games?sport=soccer&status=scheduled&limit=100', owner));
    const today = new Date().toISOString().slice(0, 10);
    const g = games.find((x) => x.date > today);
    if (!g) throw new Error('no upcoming game');
    const when = new Date(Date.parse(`${g.date}T00:00:00Z`) + 3 * 86_400_000).toISOString();
    expect((await call('POST', `/v1/competitions/${g.competition_id}/status`, source, { status: 'postponed', reason: 'Waterlogged pitch' })).status).toBe(200);
    expect((await call('POST', `/v1/competitions/${g.competition_id}/status`, source, { status: 'scheduled', start_time: when })).status).toBe(200);
    const { context, page, errors } = await newPage(DESKTOP);
    await signIn(page, owner);
    const section = page.locator('#history-section');
    await page.getByLabel('Competition or game id').fill(g.competition_id);
    await page.getByRole('button', { name: 'Show history' }).click();
    await section.locator('li[data-status="scheduled"]').waitFor();
    const items = section.locator('li[data-event]');
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).getAttribute('data-status')).toBe('postponed');
    expect(await items.nth(0).textContent()).toContain('Waterlogged pitch');
    expect(await section.locator('[data-status-now]').getAttribute('data-status-now')).toBe('scheduled');
    expect(await section.locator('[data-original-start]').getAttribute('data-original-start')).toBe(g.start_time);
    // A bad id is a clear message, not a request.
    await page.getByLabel('Competition or game id').fill('nope');
    await page.getByRole('button', { name: 'Show history' }).click();
    await section.locator('#history-error').waitFor({ state: 'visible' });
    await screenshot(page, 'dashboard-status-history');
    expect(errors).toEqual([]);
    await context.close();
  });
});
