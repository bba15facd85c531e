import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../src/errors.js';
import { retryDecision } from '../src/core.js';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
  Svc,
} from '../src/index.js';
import { Stub } from './stub.js';

const error = (type: string, code: string, message = 'no') => ({ error: { type, code, message, request_id: 'req_body' } });

describe('retries, backoff, Retry-After and idempotency keys (stub server)', () => {
  const stub = new Stub();
  let svc: Svc;
  beforeAll(async () => {
    await stub.start();
    svc = new Svc({ apiKey: 'svc_test_stub', baseUrl: stub.url });
  });
  afterEach(() => stub.reset());
  afterAll(() => stub.close());

  it('retries 503 and 500 with backoff, then returns the record; a POST keeps one Idempotency-Key on every attempt', async () => {
    stub.script = [
      { status: 503, body: error('unavailable', 'unavailable') },
      { status: 500, body: error('api_error', 'internal_error') },
      { status: 202, body: { data: [{ id: 'rpt_1', event_id: 'evt_1', tier: 'provisional' }] } },
    ];
    const r = await svc.reports.create({ game_id: 'soccer_1', team: 'ARG', points: 1 });
    expect(r).toEqual({ id: 'rpt_1', event_id: 'evt_1', tier: 'provisional' });
    expect(stub.hits).toHaveLength(3);
    const keys = stub.hits.map((h) => h.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^svc-ts-.{16,}/);
    expect(new Set(keys).size).toBe(1);
    expect(new Set(stub.hits.map((h) => h.body)).size).toBe(1);
    expect(stub.hits.every((h) => h.headers.authorization === 'Bearer svc_test_stub')).toBe(true);
    // Backoff waited between attempts (0.5 s less up to 25 % jitter, then 1 s less 25 %).
    expect(stub.hits[1].at - stub.hits[0].at).toBeGreaterThanOrEqual(350);
    expect(stub.hits[2].at - stub.hits[1].at).toBeGreaterThanOrEqual(700);
  });

  it('two calls get two different Idempotency-Keys; a caller-chosen key is sent as is; GETs carry none', async () => {
    await svc.webhooks.enable('we_a');
    await svc.webhooks.enable('we_a', { idempotencyKey: 'mine-1' });
    await svc.webhooks.get('we_a');
    const [a, b, c] = stub.hits.map((h) => h.headers['idempotency-key']);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
    expect(b).toBe('mine-1');
    expect(c).toBeUndefined();
  });

  it('honours Retry-After on 429: the retry comes no sooner than the server asked', async () => {
    stub.script = [{ status: 429, headers: { 'retry-after': '1' }, body: error('rate_limit_error', 'rate_limited') }];
    const me = await svc.me();
    expect(me).toEqual({ ok: true });
    expect(stub.hits).toHaveLength(2);
    expect(stub.hits[1].at - stub.hits[0].at).toBeGreaterThanOrEqual(1000);
  });

  it('retries 408; gives up after maxRetries with the last error, typed', async () => {
    stub.script = [{ status: 408, body: {} }, ...Array.from({ length: 3 }, () => ({ status: 502, body: error('api_error', 'internal_error', 'bad gateway') }))];
    const err = await svc.me({ maxRetries: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(stub.hits).toHaveLength(3);
    expect(err).toMatchObject({ status: 502, type: 'api_error', code: 'internal_error', requestId: 'req_body', headers: expect.objectContaining({ 'x-request-id': 'req_stub3' }) });
  });

  it('does not retry a 400 or when maxRetries is 0', async () => {
    stub.script = [{ status: 400, body: { error: { type: 'invalid_request', code: 'invalid_parameter', message: 'limit', param: 'limit', request_id: 'r' } } }];
    const err = await svc.teams.list({ limit: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'limit', code: 'invalid_parameter' });
    expect(stub.hits).toHaveLength(1);
    expect(stub.hits[0].url).toBe('/v1/teams?limit=5000');

    stub.reset();
    stub.script = [{ status: 500, body: error('api_error', 'internal_error') }];
    await expect(new Svc({ apiKey: 'k', baseUrl: stub.url, maxRetries: 0 }).me()).rejects.toBeInstanceOf(InternalServerError);
    expect(stub.hits).toHaveLength(1);
  });

  it('a Retry-After beyond 60 s is not waited for: RateLimitError with retryAfter at once', async () => {
    stub.script = [{ status: 429, headers: { 'retry-after': '120' }, body: error('rate_limit_error', 'rate_limited') }];
    const err = await svc.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, retryAfter: 120 });
    expect(stub.hits).toHaveLength(1);
  });

  it('retries dropped connections, then throws APIConnectionError', async () => {
    stub.script = ['destroy', 'destroy', 'destroy'];
    const err = await svc.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(stub.hits).toHaveLength(3);

    stub.reset();
    stub.script = ['destroy'];
    expect(await svc.me()).toEqual({ ok: true });
    expect(stub.hits).toHaveLength(2);
  });

  it('times out each attempt after timeoutMs and retries; APITimeoutError in the end', async () => {
    stub.script = ['hang', 'hang'];
    // Long enough for the second attempt's new connection to reach the stub, which shares this
    // process's event loop, on a loaded machine (200 ms was not, once).
    const err = await svc.me({ timeoutMs: 1_000, maxRetries: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(stub.hits).toHaveLength(2);
  });

  it("the caller's AbortSignal stops the call without retries", async () => {
    stub.script = ['hang'];
    const ctl = new AbortController();
    stub.onHit = () => ctl.abort();
    const pending = svc.me({ signal: ctl.signal });
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(stub.hits).toHaveLength(1);
  });

  it('reads SVC_API_KEY and SVC_BASE_URL; refuses a baseUrl with /v1 and a missing key', async () => {
    const saved = { key: process.env.SVC_API_KEY, url: process.env.SVC_BASE_URL };
    try {
      process.env.SVC_API_KEY = 'svc_test_fromenv';
      process.env.SVC_BASE_URL = `${stub.url}/`;
      await new Svc().me();
      expect(stub.hits[0].headers.authorization).toBe('Bearer svc_test_fromenv');
      expect(() => new Svc({ baseUrl: `${stub.url}/v1` })).toThrow(/without \/v1/);
      delete process.env.SVC_API_KEY;
      expect(() => new Svc()).toThrow(/SVC_API_KEY/);
    } finally {
      if (saved.key === undefined) delete process.env.SVC_API_KEY;
      else process.env.SVC_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.SVC_BASE_URL;
      else process.env.SVC_BASE_URL = saved.url;
    }
  });
});

/** One row of the Retry-After table both clients are tested against (fixtures/README.md). */
interface RetryAfterCase {
  description: string;
  status: number;
  retry_after: string | null;
  max_retries: number;
  expect: 'retry' | 'raise';
  min_wait_s: number;
  error?: string;
  retry_after_s?: number;
}

const RETRY_AFTER_CASES: RetryAfterCase[] = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures/retry-after.json'), 'utf8'));
/** Rows that wait longer than this are checked against the decision function only. */
const LIVE_WAIT_LIMIT_S = 2;

describe('the Retry-After rule, on the table shared with the Python client', () => {
  const stub = new Stub();
  beforeAll(() => stub.start());
  // Sockets stay open between cases: a pooled connection closed under the client would be one
  // more retryable failure and spend a retry the case counts on.
  afterEach(() => {
    stub.hits = [];
    stub.script = [];
  });
  afterAll(() => stub.close());

  it('the table covers both outcomes, the 60 s boundary and a retry the backoff outlasts', () => {
    expect(RETRY_AFTER_CASES.length).toBeGreaterThanOrEqual(10);
    expect(RETRY_AFTER_CASES.some((c) => c.retry_after === '60' && c.expect === 'retry')).toBe(true);
    expect(RETRY_AFTER_CASES.some((c) => c.retry_after === '61' && c.expect === 'raise')).toBe(true);
    expect(RETRY_AFTER_CASES.some((c) => c.retry_after === '0' && c.min_wait_s > 0)).toBe(true);
  });

  it.each(RETRY_AFTER_CASES.map((c) => [c.description, c] as const))('decision: %s', (_, c) => {
    const retryAfter = parseRetryAfter(c.retry_after ?? undefined);
    // The jitter's two extremes: the shortest and the longest backoff.
    for (const random of [() => 0, () => 1]) {
      const d = retryDecision(c.status, retryAfter, 0, c.max_retries, random);
      expect(d.retry).toBe(c.expect === 'retry');
      if (d.retry) expect(d.waitS).toBeGreaterThanOrEqual(c.min_wait_s);
    }
  });

  const live = RETRY_AFTER_CASES.filter((c) => c.min_wait_s <= LIVE_WAIT_LIMIT_S);
  it.each(live.map((c) => [c.description, c] as const))('against a stub: %s', async (_, c) => {
    stub.script = [{ status: c.status, headers: c.retry_after === null ? {} : { 'retry-after': c.retry_after }, body: error('some_error', 'some_code') }];
    const svc = new Svc({ apiKey: 'svc_test_stub', baseUrl: stub.url, maxRetries: c.max_retries });
    const started = Date.now();
    const outcome = await svc.me().then(
      (me) => ({ me }),
      (err: unknown) => ({ err }),
    );
    if (c.expect === 'retry') {
      expect(outcome).toEqual({ me: { ok: true } });
      expect(stub.hits).toHaveLength(2);
      expect(stub.hits[1].at - stub.hits[0].at).toBeGreaterThanOrEqual(c.min_wait_s * 1000 - 5);
    } else {
      // Raised without a retry: one request, and no sleep on the way (a busy machine gets a margin).
      expect(stub.hits).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect('err' in outcome && outcome.err instanceof APIError).toBe(true);
      const err = 'err' in outcome ? outcome.err : undefined;
      expect(err).toMatchObject({ name: c.error, status: c.status });
      if (c.retry_after_s !== undefined) expect(err).toMatchObject({ retryAfter: c.retry_after_s });
      if (c.error === 'RateLimitError') expect(err).toBeInstanceOf(RateLimitError);
    }
  });
});
