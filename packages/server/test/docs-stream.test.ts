import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asyncApiPage } from '../src/openapi/asyncapi-page.js';
import { CONTENT_SECURITY_POLICY } from '../src/routes/web/index.js';
import { collectPageErrors, DESKTOP, horizontalOverflow, inBrowser, launchBrowser, PHONE, screenshot } from './browser.js';
import { listen, testApp, type TestApp } from './helpers.js';

/** A parsed JSON document, walked as the tests of answers walk `res.json()`. */
type Json = ReturnType<typeof JSON.parse>;

describe('GET /docs/stream: the AsyncAPI document as a page, offline', () => {
  let t: TestApp;
  let base = '';
  let doc: Json;
  let browser: Browser | null = null;
  beforeAll(async () => {
    t = await testApp();
    base = (await listen(t)).http;
    doc = (await t.app.inject({ method: 'GET', url: '/v1/asyncapi.json' })).json();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  it('is public HTML under the pages’ CSP, with no script, no inline style and nothing from elsewhere', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/stream' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const html = res.body;
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//i);
    for (const [, url] of html.matchAll(/\s(?:src|href)="([^"#]+)"/g)) {
      const asset = await t.app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
    }
    const css = await t.app.inject({ method: 'GET', url: '/ui/docs.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const again = await t.app.inject({ method: 'GET', url: '/docs/stream', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('lists the channel, every operation and every message of the document, with their payload fields and examples', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/docs/stream' })).body;
    expect(html).toContain(`<h1>${doc.info.title}</h1>`);
    expect(html).toContain('id="channel-stream"');
    expect(html).toContain('<code>/v1/stream</code>');
    for (const name of ['sport', 'league', 'game', 'tier', 'since', 'access_token']) expect(html).toContain(`<td data-label="Field"><div><code>${name}</code></div></td>`);
    const operations = Object.keys(doc.operations);
    expect(operations.length).toBeGreaterThanOrEqual(4);
    for (const name of operations) expect(html).toContain(`id="operation-${name}"`);
    const messages = Object.keys(doc.components.messages);
    expect(messages.sort()).toEqual(['error', 'event', 'heartbeat', 'ping', 'pong', 'status', 'subscribe', 'subscribed']);
    for (const name of messages) {
      expect(html).toContain(`id="message-${name}"`);
      expect(html).toContain(`href="#message-${name}"`);
    }
    // The event's fields, its nested confidence as a link to the schema, and its example.
    expect(html).toContain('<td data-label="Field"><div><code>game_id</code></div></td>');
    expect(html).toContain('href="#schema-Confidence"');
    expect(html).toContain('id="schema-Confidence"');
    expect(html).toContain('&#34;evt_000000023857&#34;');
    // The words of the document: close codes and the resume rule.
    expect(html).toContain('4008');
    expect(html).toContain('<code>since=&#60;event id&#62;</code>');
  });

  it('escapes whatever the document says', () => {
    const html = asyncApiPage({
      asyncapi: '3.0.0',
      info: { title: '<img src=x onerror=alert(1)>', version: '"1"', description: 'a `<b>` and </p><script>alert(1)</script>' },
      components: { messages: { 'x"><script>': { payload: { type: 'object', properties: { '<i>': { type: 'string', description: '<svg onload=1>' } } } } } },
    });
    expect(html).not.toMatch(/<script|<img|<svg|<b>|<i>/);
    expect(html).toContain('<code>&#60;b&#62;</code>');
  });

  it('reads in a real browser: no CSP violation or error, nothing wider than a phone', async (ctx) => {
    browser = inBrowser(ctx, browser);
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`${base}/docs/stream`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(doc.info.title);
      expect(await page.getByRole('heading', { name: /^Event/ }).first().isVisible()).toBe(true);
      // The stylesheets applied: the topbar is dark, code samples are on a dark ground.
      expect(await page.locator('.topbar').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(17, 24, 39)');
      expect(await page.locator('pre').first().evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(15, 23, 42)');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `stream-docs-${viewport === PHONE ? 'phone' : 'desktop'}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
