import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, isPresent, requirePackages } from '../../../scripts/prerequisites.mjs';
/**
 * Pictures of every page are taken on each run; they replace the ones in docs/screenshots only
 * when asked (`SVC_SCREENSHOTS=docs npx vitest run …dashboard …status-page`), so a test run
 * leaves the working tree as it found it.
 */
export const SCREENSHOTS =
  process.env.SVC_SCREENSHOTS === 'docs' ? fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url)) : path.join(os.tmpdir(), 'svc-screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 812 };

/**
 * Debian's chromium, or null where it is missing; a test then asks `inBrowser` for it, which skips
 * it by name (or fails it under CI, where pages are tested with a real browser).
 */
export async function launchBrowser(): Promise<Browser | null> {
  if (!isPresent('chromium')) return null;
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The browser a test runs in; without one the test is skipped (or failed under CI), never passed. */
export function inBrowser(ctx: { skip(note?: string): never }, browser: Browser | null): Browser {
  requirePackages(ctx, ['chromium']);
  if (!browser) throw new Error(`chromium at ${CHROMIUM} did not start`);
  return browser;
}

/** Every console error, uncaught exception and CSP violation of the page, to assert there were none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** Nothing wider than the viewport: no sideways scrolling at 375 px. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // A passing toast would float over the middle of a full-page picture.
  await page.evaluate(() => document.querySelectorAll<HTMLElement>('.toast').forEach((t) => (t.hidden = true)));
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The outline the focused element shows (keyboard focus must be visible). */
export async function focusOutline(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'none';
    const s = getComputedStyle(el);
    return `${s.outlineStyle} ${s.outlineWidth}`;
  });
}
