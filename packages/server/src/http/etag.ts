import crypto from 'node:crypto';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { withHook } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A GET whose 200 answers carry an `ETag` and honour `If-None-Match` with a 304 (docs/standings.md). */
    etag?: boolean;
  }
}

/** A weak validator of a body: the same bytes, the same tag. */
export const etagOf = (body: string): string => `W/"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** Whether an `If-None-Match` header names `etag` (weak comparison, `*` matches anything). */
export function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === bare;
  });
}

/**
 * Declared per route (`config.etag`): a 200 answer gets an ETag from its bytes, and a request whose
 * If-None-Match names it gets a 304 without a body. Runs after the response cache's hook, so a
 * cached answer is tagged the same way.
 */
export function registerEtags(app: FastifyInstance): void {
  const tag: onSendHookHandler = (request, reply, payload, done) => {
    if (reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload);
    const etag = etagOf(payload);
    reply.header('ETag', etag);
    if (matches(request.headers['if-none-match'], etag)) {
      reply.code(304);
      reply.removeHeader('content-type');
      reply.removeHeader('content-length');
      return done(null, '');
    }
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.etag) return;
    route.onSend = withHook(route.onSend, tag);
  });
}
