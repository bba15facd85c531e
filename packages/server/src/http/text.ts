import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import { invalid } from '../domain/errors.js';
import { paramOf } from './body.js';

/**
 * Text no store can keep as sent: U+0000 (PostgreSQL refuses it in text columns, so it was a
 * 500 there) and unpaired UTF-16 surrogates (both drivers write U+FFFD instead, so two distinct
 * `ref`s could collide). Everything else in Unicode is data.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The JSON-pointer path of the first string (value or key) in `value` that holds unstorable text,
 * or null. Iterative: a body nested 100,000 deep must not overflow the stack.
 */
export function findUnstorableText(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next) break;
    const [v, path] = next;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (typeof v === 'object' && v !== null) {
      for (const k of Object.keys(v).reverse()) {
        if (UNSTORABLE.test(k)) return `${path}/${k.replace(UNSTORABLE, '?')}`;
        stack.push([Reflect.get(v, k), `${path}/${k}`]);
      }
    }
  }
  return null;
}

/** A preValidation hook for every route: path parameters, query and body, checked at the edge. */
export const refuseUnstorableText: preValidationHookHandler = (request: FastifyRequest, _reply, done) => {
  for (const part of [request.params, request.query, request.body]) {
    const path = findUnstorableText(part);
    if (path !== null) {
      const param = paramOf(path);
      return done(invalid('invalid_characters', `${param ? `'${param}'` : 'The request'} contains a NUL character or an unpaired surrogate.`, param || undefined));
    }
  }
  done();
};
