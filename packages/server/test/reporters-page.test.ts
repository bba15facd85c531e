import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { reporterIdOf } from '../src/domain/consensus/reporter-ids.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { openDb } from '../src/store/sql/db.js';
import { collectPageErrors, DESKTOP, horizontalOverflow, inBrowser, launchBrowser, PHONE, screenshot } from './browser.js';
import { tmpDir, until } from './helpers.js';
import { serveSvc, type SvcProcess } from './process.js';

/**
 * The dashboard's Reporters page end to end (docs/dashboard.md): a real `svc serve`, a real
 * browser. Flagged reporters come first; Suspend and Restore are clicks whose effect is checked
 * through the REST API (the reporter's next report counts for nothing, then again).
 */
describe('dashboard: the Reporters page', () => {
  let svc: SvcProcess;
  let browser: Browser | null;
  let admin: string;
  let viewer: string;
  let honest: { key: string; id: string };
  let troll: { key: string; id: string };
  let app: { key: string; id: string };
  // Two end users a fan app names: an ordinary name, and one of 128 characters that is markup.
  const FAN = 'fan-8312';
  const MARKUP = `<img src=x onerror="document.title='owned'">${'W'.repeat(84)}`;
  const fanId = (name: string) => reporterIdOf(`${app.id}/${name}`);
  let games: { id: string; competitors: { entity_id: string }[] }[];

  beforeAll(async () => {
    const dataDir = tmpDir('svc-reporters-page-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    const db = await openDb({ dataDir, databaseUrl: null });
    const keys = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
    const now = new Date();
    admin = (await keys.create({ name: 'operator', plan: 'internal', products: ['admin'], sports: null, leagues: null }, now)).key;
    viewer = (await keys.create({ name: 'viewer', plan: 'pro', products: ['live'], sports: null, leagues: null }, now)).key;
    const reporter = async (name: string) => {
      const { key, record } = await keys.create({ name, plan: 'internal', products: ['report'], sports: null, leagues: null }, now);
      return { key, id: record.id };
    };
    honest = await reporter('honest app');
    troll = await reporter('troll app');
    app = await reporter('fan app');
    await db.close();
    // Unbacked provisionals are retracted after 1.5 s, so track records build up within the test.
    svc = await serveSvc(dataDir, { SVC_SIMULATOR: 'off', SVC_CONSENSUS_RETRACT_MS: '1500' });
    browser = await launchBrowser();
    games = (await call('GET', '/v1/games?date=today&sport=soccer&status=scheduled&limit=100', viewer)).body.data;
    // The troll invents three goals nobody backs; the honest app reports one that is not backed either.
    for (const g of games.slice(0, 3)) expect((await report(troll.key, g)).status).toBe(202);
    expect((await report(honest.key, games[3])).status).toBe(202);
    for (const name of [FAN, MARKUP]) expect((await call('POST', '/v1/reports', app.key, { game_id: games[3].id, team: games[3].competitors[1].entity_id.split(':').pop(), points: 1, reporter: name })).status).toBe(202);
    await until(async () => (await call('GET', '/v1/reporters?flagged=true', admin)).body.data.length === 1, 20_000, 'the troll flagged');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function call(method: string, url: string, key: string, input?: unknown) {
    const res = await fetch(`${svc.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(input !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: input === undefined ? undefined : JSON.stringify(input),
    });
    return { status: res.status, body: await res.json() };
  }
  const report = (key: string, g: (typeof games)[number], side = 0) => call('POST', '/v1/reports', key, { game_id: g.id, team: g.competitors[side].entity_id.split(':').pop(), points: 1 });

  async function signIn(page: Page, key: string): Promise<void> {
    await page.goto(`${svc.base}/dashboard/reporters`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
  }
  const row = (page: Page, id: string) => page.locator(`tr[data-reporter="${id}"]`);

  it('lists reporters flagged first, suspends one (its next report counts for nothing) and restores it', { timeout: 120_000 }, async (ctx) => {
    browser = inBrowser(ctx, browser);
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors = collectPageErrors(page);

    const doc = await page.goto(`${svc.base}/dashboard/reporters`);
    expect(doc?.headers()['content-security-policy'] ?? '').toContain("script-src 'self'");
    expect((await doc?.text()) ?? '').not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=/);

    await signIn(page, admin);
    await row(page, reporterIdOf(honest.id)).waitFor();
    const order = await page.locator('tbody tr').evaluateAll((els) => els.map((e) => [e.getAttribute('data-reporter'), e.getAttribute('data-flagged')]));
    // Flagged first, then the API's order: by voter (a key's own voice, then the reporters it names).
    expect(MARKUP).toHaveLength(128);
    const others = [reporterIdOf(honest.id), fanId(FAN), fanId(MARKUP)].map((id) => [id, Buffer.from(id.slice(4), 'base64url').toString()] as const);
    expect(order).toEqual([[reporterIdOf(troll.id), 'true'], ...others.sort((a, b) => (a[1] < b[1] ? -1 : 1)).map(([id]) => [id, 'false'])]);
    // A named reporter shows its name, as text, above its key.
    for (const name of [FAN, MARKUP]) {
      const cell = row(page, fanId(name)).locator('td[data-label="Reporter"]');
      expect(await cell.locator('strong').textContent()).toBe(name);
      expect(await cell.locator('.mono').textContent()).toBe(app.id);
    }
    expect(await page.locator('#reporters img').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    expect(await row(page, reporterIdOf(honest.id)).locator('td[data-label="Reporter"] .muted').first().textContent()).toBe('the key’s own voice');
    const trollRow = row(page, reporterIdOf(troll.id));
    expect(await trollRow.locator('.flag').textContent()).toBe('Flagged');
    expect(await trollRow.locator('td[data-label="Disagreed"]').textContent()).toBe('3');
    expect(await trollRow.locator('td[data-label="Reports"]').textContent()).toBe('3');
    await screenshot(page, 'dashboard-reporters-desktop');

    // Suspend: confirmed in a dialog; the row says so, and the API agrees.
    await trollRow.getByRole('button', { name: /^Suspend/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend' }).click();
    await expect.poll(() => trollRow.locator('.status-badge').textContent(), { timeout: 10_000 }).toBe('Suspended');
    const suspended = (await call('GET', '/v1/reporters?suspended=true', admin)).body.data;
    expect(suspended.map((r: { id: string }) => r.id)).toEqual([reporterIdOf(troll.id)]);
    // The other team: a report of the same score within 5 s of the troll's earlier one would be a repeat.
    const ignored = await report(troll.key, games[0], 1);
    expect(ignored.status).toBe(202);
    expect(ignored.body.data[0].event_id).toBeNull();

    // "Suspended only" narrows the table.
    await page.getByLabel('Suspended only').check();
    await page.getByRole('button', { name: 'Show reporters' }).click();
    await expect.poll(() => page.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1);
    await page.getByLabel('Suspended only').uncheck();
    await page.getByRole('button', { name: 'Show reporters' }).click();
    await expect.poll(() => page.locator('tbody tr').count(), { timeout: 10_000 }).toBe(4);

    // A reporter the app names is suspended alone: the app's other reporter and its key are not.
    const fanRow = row(page, fanId(FAN));
    await fanRow.getByRole('button', { name: `Suspend ${FAN} (${app.id})` }).click();
    expect(await page.getByRole('dialog').textContent()).toContain(`Reports from ${FAN} through ${app.id}`);
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend' }).click();
    await expect.poll(() => fanRow.locator('.status-badge').textContent(), { timeout: 10_000 }).toBe('Suspended');
    expect(await page.locator('#toast').textContent()).toBe(`Suspended ${FAN} (${app.id}).`);
    const named = (await call('GET', `/v1/reporters?key=${app.id}`, admin)).body.data as { reporter: string; suspended: boolean }[];
    // In voter order: '<' sorts before 'f'.
    expect(named.map((r) => [r.reporter, r.suspended])).toEqual([
      [MARKUP, false],
      [FAN, true],
    ]);
    await fanRow.getByRole('button', { name: /^Restore/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => fanRow.locator('.status-badge').textContent(), { timeout: 10_000 }).toBe('Active');
    expect((await call('GET', '/v1/reporters?suspended=true', admin)).body.data.map((r: { id: string }) => r.id)).toEqual([reporterIdOf(troll.id)]);

    // Restore: the next report counts again.
    await row(page, reporterIdOf(troll.id)).getByRole('button', { name: /^Restore/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => row(page, reporterIdOf(troll.id)).locator('.status-badge').textContent(), { timeout: 10_000 }).toBe('Active');
    expect((await report(troll.key, games[1], 1)).body.data[0].event_id).toMatch(/^evt_/);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('tells a key without admin what it lacks, and is readable at 375 px', { timeout: 60_000 }, async (ctx) => {
    browser = inBrowser(ctx, browser);
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    await signIn(page, viewer);
    await expect.poll(() => page.locator('#app-error').textContent()).toMatch(/no admin product/);
    expect(await page.locator('tbody tr').count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, admin);
    await row(page, reporterIdOf(troll.id)).waitFor();
    // The 128-character name wraps inside its cell.
    await row(page, fanId(MARKUP)).waitFor();
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'dashboard-reporters-mobile');
    await context.close();
  });
});
