import crypto from 'node:crypto';
import type { ChangeFeed } from '../../changes/feed.js';
import { requireProduct } from '../../domain/scopes.js';
import { principal, type RoutePlugin } from '../types.js';
import { listChanges } from './schema.js';

/**
 * `GET /v1/changes` (docs/changes.md). Products: any of `live` or `archive`. The answer carries
 * an ETag of its body and honours If-None-Match; a long poll ends early when its client goes.
 */
export const changeRoutes: RoutePlugin<{ changes: ChangeFeed }> = async (app, { changes }) => {
  app.get(
    '/changes',
    {
      schema: listChanges,
      onSend: async (request, reply, payload) => {
        if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
        const etag = `"${crypto.createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`;
        reply.header('ETag', etag);
        if (request.headers['if-none-match'] === etag) {
          reply.code(304);
          return '';
        }
        return payload;
      },
    },
    async (request) => {
      const who = principal(request);
      if (!who.products.includes('live')) requireProduct(who, 'archive');
      const { since, limit = 100, types, wait = 0 } = request.query;
      const gone = new AbortController();
      const onClose = () => gone.abort();
      request.raw.once('close', onClose);
      try {
        return await changes.page(who, { since, limit, types, wait }, gone.signal);
      } finally {
        request.raw.off('close', onClose);
      }
    },
  );
};
