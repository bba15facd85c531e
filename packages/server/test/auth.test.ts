import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Redis } from 'ioredis';
import { hashKey } from '../src/domain/keys.js';
import { MemoryRateLimiter, RedisRateLimiter } from '../src/http/rate-limit.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import { auth, listen, ManualClock, testApp, type TestApp } from './helpers.js';
import { expectDocumentedError, rawRequest } from './raw-http.js';
import { expectError } from './contract.js';

describe('keys, plans and rate limits', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:30.000Z'));
  beforeAll(async () => {
    t = await testApp({ clock });
  });
  afterAll(async () => t.close());
  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });

  it('stores keys hashed, never in plaintext', async () => {
    const key = await t.key();
    const rows = await t.db.kysely.selectFrom('api_keys').selectAll().execute();
    expect(rows.some((r) => JSON.stringify(r).includes(key))).toBe(false);
    expect(rows.some((r) => r.hash === hashKey(key))).toBe(true);
  });

  it('tells a key of the other environment apart', async () => {
    const res = await get('/v1/me', auth('svc_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'));
    expectError(res, 401, 'authentication_error', { code: 'invalid_api_key' });
    expect(res.json().error.message).toMatch(/production key/);
  });

  it('rejects malformed and unknown keys, and revoked ones', async () => {
    expectError(await get('/v1/me', { authorization: 'Bearer nope' }), 401, 'authentication_error');
    expectError(await get('/v1/me', { authorization: 'Basic abc' }), 401, 'authentication_error');
    const key = await t.key();
    const me = (await get('/v1/me', auth(key))).json().data;
    await t.services.keys.revoke(me.id, new Date(clock.now()));
    t.services.auth.forget();
    expectError(await get('/v1/me', auth(key)), 401, 'authentication_error');
  });

  it('limits a free key to 60 requests a minute with RateLimit headers and Retry-After', async () => {
    const key = await t.key({ plan: 'free' });
    let last = await get('/v1/me', auth(key));
    expect(last.headers['ratelimit-limit']).toBe('60');
    expect(last.headers['ratelimit-remaining']).toBe('59');
    // Sliding window: the request leaves it 60 s from now, whatever the minute on the clock.
    expect(last.headers['ratelimit-reset']).toBe('60');
    for (let i = 0; i < 59; i++) last = await get('/v1/me', auth(key));
    expect(last.statusCode).toBe(200);
    expect(last.headers['ratelimit-remaining']).toBe('0');
    const limited = await get('/v1/me', auth(key));
    expectError(limited, 429, 'rate_limit_error', { code: 'rate_limited' });
    expect(limited.headers['retry-after']).toBe('60');
    // The clock minute ends (10:01:00): a fixed window would admit 60 more here.
    clock.advance(30_000);
    const atEdge = await get('/v1/me', auth(key));
    expectError(atEdge, 429, 'rate_limit_error', { code: 'rate_limited' });
    expect(atEdge.headers['retry-after']).toBe('30');
    clock.advance(30_000);
    const after = await get('/v1/me', auth(key));
    expect(after.statusCode).toBe(200);
    expect(after.headers['ratelimit-remaining']).toBe('59');
  });

  it('counts each key on its own', async () => {
    const a = await t.key({ plan: 'free' });
    const b = await t.key({ plan: 'free' });
    for (let i = 0; i < 61; i++) await get('/v1/me', auth(a));
    expect((await get('/v1/me', auth(b))).statusCode).toBe(200);
  });

  it('puts a request id on every response and answers unknown routes in the error body', async () => {
    const res = await get('/v1/nothing-here', {});
    expectError(res, 404, 'not_found', { code: 'route_not_found' });
  });

  it('serves the OpenAPI document and docs without a key', async () => {
    const spec = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(spec.statusCode).toBe(200);
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');
  });

  it('refuses a request with two Authorization headers (400, on REST and the stream) instead of serving it as the first key', async () => {
    const valid = await t.key({ plan: 'pro' });
    const other = await t.key({ plan: 'free' });
    const { port } = await listen(t);
    const two = (path: string, extra = '') =>
      rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${valid}\r\n${extra}Authorization: Bearer ${other}\r\nConnection: close\r\n\r\n`);
    for (const path of ['/v1/me', '/v1/teams?league=wc&limit=1']) {
      const res = await two(path);
      expectDocumentedError(res, 400, 'invalid_request', 'invalid_request');
      expect(JSON.parse(res.body).error.param).toBe('Authorization');
    }
    // The same key twice is still two headers: what a proxy appended is not for svc to guess.
    expectDocumentedError(
      await rawRequest(port, `GET /v1/me HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${valid}\r\nAUTHORIZATION: Bearer ${valid}\r\nConnection: close\r\n\r\n`),
      400,
      'invalid_request',
    );
    const upgrade = await two('/v1/stream?sport=soccer', 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n');
    expect(upgrade.status).toBe(400);
    expect(JSON.parse(upgrade.body).error).toMatchObject({ type: 'invalid_request', param: 'Authorization' });
    // One header is served as before.
    const one = await rawRequest(port, `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${valid}\r\nConnection: close\r\n\r\n`);
    expect(one.status).toBe(200);
  });
});

describe('rate limiter implementations', () => {
  it('memory limiter frees a request 60 s after it, not at the minute edge', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:59.000Z'));
    const l = new MemoryRateLimiter(clock);
    expect((await l.hit('k', 1)).allowed).toBe(true);
    expect((await l.hit('k', 1)).allowed).toBe(false);
    clock.advance(1000);
    expect((await l.hit('k', 1))).toMatchObject({ allowed: false, resetS: 59 });
    clock.advance(58_999);
    expect((await l.hit('k', 1)).allowed).toBe(false);
    clock.advance(1);
    expect((await l.hit('k', 1)).allowed).toBe(true);
  });

  it('redis limiter shares one budget between two nodes', async () => {
    const url = inject('redisUrl');
    if (!url) {
      if (process.env.CI) throw new Error('Redis required in CI');
      return;
    }
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:10.000Z'));
    const a = new Redis(url);
    const b = new Redis(url);
    const ns = redisKeys(`svc-test-${Math.random().toString(36).slice(2)}:`);
    const nodeA = new RedisRateLimiter(a, clock, ns);
    const nodeB = new RedisRateLimiter(b, clock, ns);
    for (let i = 0; i < 5; i++) await (i % 2 ? nodeA : nodeB).hit('key1', 6);
    const sixth = await nodeA.hit('key1', 6);
    expect(sixth).toMatchObject({ allowed: true, remaining: 0, resetS: 60 });
    expect((await nodeB.hit('key1', 6)).allowed).toBe(false);
    a.disconnect();
    b.disconnect();
  });
});
