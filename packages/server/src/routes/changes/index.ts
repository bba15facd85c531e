import crypto from 'node:crypto';
import { ChangePage } from '@svc/schema';
import type { ChangeFeed } from '../../changes/feed.js';
import { requireProduct } from '../../domain/scopes.js';
import { sendSerialized } from '../../http/serialized.js';
import { principal, type RoutePlugin } from '../types.js';
import { listChanges } from './schema.js';

const etagOf = (body: string): string => `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/**
 * `GET /v1/changes` (docs/changes.md). Products: any of `live` or `archive`. The answer carries
 * an ETag of its body and honours If-None-Match; a long poll ends early when its client goes.
 * Followers woken by one change share one page (ChangeFeed), so its JSON and ETag are made once
 * (keyed by the page's data array) with the serializer Fastify compiles for the schema.
 */
export const changeRoutes: RoutePlugin<{ changes: ChangeFeed }> = async (app, { changes }) => {
  const made = new WeakMap<object, { body: string; etag: string }>();
  app.get('/changes', { schema: listChanges }, async (request, reply) => {
    const who = principal(request);
    if (!who.products.includes('live')) requireProduct(who, 'archive');
    const { since, limit = 100, types, wait = 0 } = request.query;
    const gone = new AbortController();
    const onClose = () => gone.abort();
    request.raw.once('close', onClose);
    let page: ChangePage;
    try {
      page = await changes.page(who, { since, limit, types, wait }, gone.signal);
    } finally {
      request.raw.off('close', onClose);
    }
    let out = page.data.length > 0 ? made.get(page.data) : undefined;
    if (!out) {
      const body = reply.compileSerializationSchema(ChangePage)(page);
      out = { body, etag: etagOf(body) };
      if (page.data.length > 0) made.set(page.data, out);
    }
    reply.header('ETag', out.etag);
    if (request.headers['if-none-match'] === out.etag) return reply.code(304).send(null);
    return sendSerialized(reply, out.body);
  });
};
