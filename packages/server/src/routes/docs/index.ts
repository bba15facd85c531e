import crypto from 'node:crypto';
import { asyncApiPage } from '../../openapi/asyncapi-page.js';
import type { RoutePlugin } from '../types.js';
import { loadAsset, securePage } from '../web/index.js';

/**
 * `/docs/stream`: the stream's AsyncAPI document drawn as a page, beside the REST reference at
 * `/docs`. Public, no script, the pages' CSP. Rendered once: the document is fixed for the process.
 */
export const docsRoutes: RoutePlugin<{ asyncApi: Record<string, unknown> }> = async (app, { asyncApi }) => {
  const html = asyncApiPage(asyncApi);
  const etag = `"${crypto.createHash('sha256').update(html).digest('base64url').slice(0, 22)}"`;
  app.get('/docs/stream', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    securePage(reply, 'text/html; charset=utf-8').header('Cache-Control', 'no-cache').header('ETag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(html);
  });
  const css = loadAsset('docs/docs.css');
  app.get('/ui/docs.css', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    securePage(reply, css.type).header('Cache-Control', 'no-cache').header('ETag', css.etag);
    if (request.headers['if-none-match'] === css.etag) return reply.code(304).send();
    return reply.send(css.body);
  });
};
