import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import type { RoutePlugin } from '../types.js';

/** packages/server/web: the dashboard and status page, served as written (no build step). */
const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Scripts, styles and fetches from this origin only; no inline script or style, no framing, no
 * form posting anywhere (the sign-in form is handled by script, so a key can never end up in a
 * URL even if the script failed to load).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export function loadAsset(file: string): Asset {
  const body = fs.readFileSync(path.join(WEB_DIR, file));
  const type = TYPES[path.extname(file)];
  if (!type) throw new Error(`web asset ${file}: unknown type`);
  return { body, type, etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** URL → file under web/. A fixed list: nothing else on disk is reachable. */
const PAGES: Record<string, string> = {
  '/dashboard': 'dashboard/index.html',
  '/dashboard/reporters': 'dashboard/reporters.html',
  '/ui/svc.css': 'ui/svc.css',
  '/ui/format.js': 'ui/format.js',
  '/ui/status.js': 'status/status.js',
  '/ui/dashboard.js': 'dashboard/dashboard.js',
  '/ui/reporters.js': 'dashboard/reporters.js',
  '/ui/api.js': 'dashboard/api.js',
  '/ui/page.js': 'dashboard/page.js',
  '/ui/favicon.svg': 'ui/favicon.svg',
};

/** The headers of every page and asset: the CSP and its companions. */
export function securePage(reply: FastifyReply, type: string): FastifyReply {
  return reply
    .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .type(type);
}

/** The dashboard and the assets of both pages: public files (the data comes from the API, with the user's key). */
export const webRoutes: RoutePlugin = async (app) => {
  for (const [url, file] of Object.entries(PAGES)) {
    const asset = loadAsset(file);
    app.get(url, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      securePage(reply, asset.type).header('Cache-Control', 'no-cache').header('ETag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.send(asset.body);
    });
  }
};
