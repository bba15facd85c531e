import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { serializerCompiler } from '../src/http/serialization.js';
import { validatorCompiler } from '../src/http/validation.js';
import { testApp } from './helpers.js';

const Score = Type.Object({ home: Type.Integer(), away: Type.Integer(), note: Type.Optional(Type.String()) }, { additionalProperties: false });
const route = { method: 'GET', url: '/x', httpStatus: '200' };

describe('schema compilers shared by every app of a process', () => {
  it('compile a response schema once: a second app gets the same serializer, and it serializes by the schema', () => {
    const first = serializerCompiler()({ schema: Score, ...route });
    const second = serializerCompiler()({ schema: Score, ...route });
    expect(second).toBe(first);
    expect(first({ home: 2, away: 1, extra: 'dropped' })).toBe('{"home":2,"away":1}');
    const other = serializerCompiler()({ schema: Type.Object({ home: Type.Integer() }), ...route });
    expect(other).not.toBe(first);
    expect(other({ home: 3, away: 4 })).toBe('{"home":3}');
  });

  it('compile a query and a body schema apart, once each: a query is text to coerce, a body has types', () => {
    const Query = Type.Object({ limit: Type.Integer() });
    const query = validatorCompiler()({ schema: Query, httpPart: 'querystring', method: 'GET', url: '/x' });
    const body = validatorCompiler()({ schema: Query, httpPart: 'body', method: 'POST', url: '/x' });
    expect(validatorCompiler()({ schema: Query, httpPart: 'querystring', method: 'GET', url: '/y' })).toBe(query);
    expect(validatorCompiler()({ schema: Query, httpPart: 'body', method: 'POST', url: '/y' })).toBe(body);
    expect(query({ limit: '10' })).toBe(true);
    expect(body({ limit: '10' })).toBe(false);
    expect(body({ limit: 10 })).toBe(true);
  });

  it('a second app answers with its own data through the shared serializers', async () => {
    const [a, b] = await Promise.all([testApp(), testApp()]);
    try {
      const [ka, kb] = await Promise.all([a.key(), b.key()]);
      const wrong = await b.app.inject({ url: '/v1/teams?league=wc&limit=5', headers: { authorization: `Bearer ${ka}` } });
      expect(wrong.statusCode).toBe(401);
      const right = await b.app.inject({ url: '/v1/teams?league=wc&limit=5', headers: { authorization: `Bearer ${kb}` } });
      expect(right.statusCode).toBe(200);
      expect(right.json()).toEqual((await a.app.inject({ url: '/v1/teams?league=wc&limit=5', headers: { authorization: `Bearer ${ka}` } })).json());
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
