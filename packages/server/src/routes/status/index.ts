import { loadAsset, securePage } from '../web/index.js';
import type { StatusService } from '../../status/service.js';
import type { RoutePlugin } from '../types.js';
import { getStatus } from './schema.js';

const PLACEHOLDER = '<!--initial-status-->';

/**
 * The page with the current status inside as a JSON data block (never executed, so the CSP's
 * script-src 'self' holds): the script draws it at once, before the page's load event, and
 * refreshes from /v1/status afterwards. `<` is escaped so no value can close the block.
 */
function statusPage(template: string, data: unknown): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return template.replace(PLACEHOLDER, `<script type="application/json" id="initial-status">${json}</script>`);
}

/** Public status: no key, no scope — it shows the service's health, never data. The page is web/status/. */
export const statusRoutes: RoutePlugin<{ status: StatusService }> = async (app, { status }) => {
  const template = loadAsset('status/index.html').body.toString('utf8');
  if (!template.includes(PLACEHOLDER)) throw new Error(`web/status/index.html lacks ${PLACEHOLDER}`);
  app.get('/v1/status', { config: { public: true }, schema: getStatus }, async () => ({ data: await status.report() }));
  app.get('/status', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    securePage(reply, 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .send(statusPage(template, { data: await status.report() })),
  );
};
