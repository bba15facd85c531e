import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { DAY_MS, MINUTE_MS } from '../src/domain/status.js';
import { collectPageErrors, DESKTOP, focusOutline, horizontalOverflow, inBrowser, launchBrowser, PHONE, screenshot } from './browser.js';
import { auth, listen, testApp, type TestApp } from './helpers.js';

declare global {
  /** Set in the page by the test: still there means the page was not reloaded. */
  interface Window {
    marker?: string;
  }
}

/**
 * The status page in a real browser, over history the service recorded itself: two quiet days,
 * then a day with a live game whose feed went silent for 5 minutes (one incident, resolved).
 * The clock is moved minute by minute and every minute is sampled, as the sampler would.
 */
describe('status page over recorded history', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser | null;
  const clock = new ManualClock();
  let key: string;
  let game: { id: string; team: string; date: string };
  const at = (hhmm: string) => Date.parse(`${game.date}T${hhmm}:00.000Z`);

  /** A play reported by a reporter of its own: one key has at most two lone candidates open per game (docs/consensus.md). */
  const score = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: { ...auth(await t.key()), 'content-type': 'application/json' }, payload: JSON.stringify({ game_id: game.id, team: game.team, points: 2 }) });
    expect(res.statusCode, res.body).toBe(202);
  };
  /** Samples every minute from now until `until` (exclusive), scoring at the given minutes. */
  const run = async (until: number, scoreAt: number[] = []) => {
    while (clock.now() < until) {
      if (scoreAt.includes(clock.now())) await score();
      await t.services.status.sample();
      clock.advance(MINUTE_MS);
    }
  };

  beforeAll(async () => {
    t = await testApp({ clock });
    const row = await t.db.kysely
      .selectFrom('competitions')
      .select(['n', 'date'])
      .where('sport', '=', 'basketball')
      .where('status', '=', 'scheduled')
      .orderBy('date')
      .limit(1)
      .executeTakeFirstOrThrow();
    game = { id: `basketball_${row.n}`, team: '', date: row.date };
    key = await t.key();
    clock.set(at('00:00') - 2 * DAY_MS);
    const g = (await t.app.inject({ url: `/v1/games/${game.id}`, headers: auth(key) })).json().data;
    game.team = String(g.competitors[0].entity_id).split(':').pop() ?? '';

    await run(at('00:00')); // two quiet days
    // Live from 00:10; silent 00:10 → 00:20, so down 00:15..00:19; events every few minutes after.
    await run(at('00:31'), [at('00:10'), at('00:20'), at('00:24'), at('00:28'), at('00:30')]);
    clock.set(at('00:30') + 30_000);
    base = (await listen(t)).http;
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  async function open(viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    return { page, errors, close: () => context.close() };
  }

  it('shows 90 daily bars per sport with the day on hover, the incident with its start, end and duration, and refreshes itself', { timeout: 120_000 }, async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { page, errors, close } = await open(DESKTOP);
    await page.clock.install();
    const res = await page.goto(`${base}/status`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('body[data-loaded="true"]').waitFor();
    expect(await page.locator('#overall').textContent()).toBe('operational');

    // Channels.
    const channels = await page.locator('#channels li').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-channel')}:${e.querySelector('.state')?.textContent}`));
    expect(channels).toEqual(['rest:operational', 'stream:operational', 'webhooks:operational']);

    // The bars: 90 per sport, today last; the silent day shows below target, the quiet ones at 100 %.
    expect(await page.locator('.history-row').count()).toBe(5);
    for (const row of await page.locator('.history-row').all()) expect(await row.locator('.bar').count()).toBe(90);
    const bb = page.locator('.history-row[data-sport="basketball"]');
    const bars = bb.locator('.bar');
    const yesterday = new Date(at('00:00') - DAY_MS).toISOString().slice(0, 10);
    expect(await bars.nth(89).getAttribute('data-date')).toBe(game.date);
    expect(await bars.nth(89).getAttribute('class')).toBe('bar bad');
    expect(await bars.nth(89).getAttribute('title')).toBe(`Basketball, ${game.date}: 83.87 % up`);
    expect(await bars.nth(88).getAttribute('class')).toBe('bar ok');
    expect(await bars.nth(86).getAttribute('class')).toBe('bar none');
    expect(await bb.locator('.uptime').textContent()).toBe('99.82 % uptime');
    expect(await page.locator('.history-row[data-sport="soccer"] .uptime').textContent()).toBe('100 % uptime');

    // Hover shows the day's figure.
    await bars.nth(88).hover();
    await expect.poll(() => page.locator('#bar-tip').textContent()).toBe(`Basketball, ${yesterday}: 100 % up`);
    expect(await page.locator('#bar-tip').isVisible()).toBe(true);

    // The incident: title, start, end and duration; times relative, ISO on hover.
    const incident = page.locator('#incidents li.incident');
    expect(await incident.count()).toBe(1);
    const text = (await incident.textContent()) ?? '';
    expect(text).toContain('Basketball: no events for 5 minutes during live games');
    expect(text).toContain('Resolved');
    expect(text).toContain('lasted 5 min');
    expect(await incident.locator('time').first().getAttribute('title')).toBe(new Date(at('00:15')).toISOString());
    expect(await incident.locator('time').first().textContent()).toBe('15 min ago');
    expect(await incident.locator('time').nth(1).getAttribute('datetime')).toBe(new Date(at('00:20')).toISOString());

    // Keyboard: Tab reaches a row of bars (focus visible); arrows read each day aloud and in the tip.
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      expect(await focusOutline(page)).toMatch(/^solid [1-9]/);
      reached = (await page.evaluate(() => document.activeElement?.closest('.history-row')?.getAttribute('data-sport'))) === 'soccer';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => page.locator('#live').textContent()).toBe(`Soccer, ${yesterday}: 100 % up`);

    // Auto-refresh: the game goes silent for 5 minutes; 30 s later the page shows it, without a reload.
    await page.evaluate(() => (window.marker = 'same page'));
    clock.set(at('00:31'));
    await run(at('00:37'));
    await page.clock.runFor(30_000);
    await expect.poll(() => page.locator('#overall').textContent()).toBe('degraded');
    await expect.poll(() => page.locator('#incidents li.incident').count()).toBe(2);
    expect(await page.locator('#incidents li.incident.open').textContent()).toContain('Ongoing');
    expect(await page.locator('tr[data-sport="basketball"] td').nth(1).textContent()).toBe('degraded');
    expect(await page.evaluate(() => window.marker)).toBe('same page');
    await screenshot(page, 'status-desktop');
    expect(errors).toEqual([]);
    await close();
  });

  it('is readable at 375 px wide', async (ctx) => {
    browser = inBrowser(ctx, browser);
    const { page, errors, close } = await open(PHONE);
    await page.goto(`${base}/status`);
    await page.locator('body[data-loaded="true"]').waitFor();
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    // Every day still has a bar a finger can hover, however narrow.
    const width = await page.locator('.history-row[data-sport="soccer"] .bar').last().boundingBox();
    expect(width?.width ?? 0).toBeGreaterThan(2);
    await screenshot(page, 'status-mobile');
    expect(errors).toEqual([]);
    await close();
  });
});
