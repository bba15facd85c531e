import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { expectError } from './contract.js';
import { auth, testApp, type TestApp } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

type Json = Record<string, unknown>;

describe('POST /v1/webhooks/:id/test', () => {
  let t: TestApp;
  let rx: Receiver;
  const clock = new ManualClock(Date.now());
  let owner: string;

  beforeAll(async () => {
    t = await testApp({ clock, config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    rx = await startReceiver();
    owner = await t.key({ products: ['live'] });
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  const call = (method: 'GET' | 'POST', url: string, key: string | null, body?: Json) =>
    t.app.inject({ method, url, headers: key ? auth(key) : {}, ...(body !== undefined ? { payload: body } : {}) });
  const create = async (url: string, key = owner) => {
    const res = await call('POST', '/v1/webhooks', key, { url, tier: 'confirmed' });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string; secret: string };
  };

  it('sends one signed test event with the headers of a delivery and answers with the outcome', async () => {
    const ep = await create(`${rx.url}/hooks`);
    const before = rx.requests.length;
    const res = await call('POST', `/v1/webhooks/${ep.id}/test`, owner);
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json().data;
    expect(out).toMatchObject({ endpoint_id: ep.id, delivered: true, status_code: 200, response_excerpt: 'ok', error: null, sent_at: new Date(clock.now()).toISOString() });
    expect(out.event_id).toMatch(/^evt_test_[A-Za-z0-9]{20}$/);
    expect(out.delivery_id).toMatch(/^dlv_[A-Za-z0-9]{24}$/);
    expect(out.duration_ms).toBeGreaterThanOrEqual(0);

    expect(rx.requests.length).toBe(before + 1);
    const got = rx.requests[rx.requests.length - 1];
    expect(got.path).toBe('/hooks');
    expect(JSON.parse(got.body)).toEqual({ id: out.event_id, type: 'test', ts: out.sent_at, schema: 'svc.event.v1' });
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'svc-webhooks/1.0',
      'x-svc-topic': 'event.test',
      'x-svc-event-id': out.event_id,
      'x-svc-delivery-id': out.delivery_id,
      'x-svc-attempt': '1',
    });
    const verdict = verifySignature(String(got.headers['x-svc-signature']), got.body, ep.secret, { now: Math.floor(clock.now() / 1000) });
    expect(verdict.ok).toBe(true);

    // Outside the queue: no delivery row, nothing retried, the endpoint untouched.
    expect((await call('GET', `/v1/webhooks/${ep.id}/deliveries`, owner)).json().data).toEqual([]);
    expect((await call('GET', `/v1/webhooks/${ep.id}`, owner)).json().data.status).toBe('enabled');
  });

  it('signs with both secrets during a rotation', async () => {
    const ep = await create(`${rx.url}/rotating`);
    const rotated = (await call('POST', `/v1/webhooks/${ep.id}/rotate-secret`, owner)).json().data;
    const out = (await call('POST', `/v1/webhooks/${ep.id}/test`, owner)).json().data;
    const got = rx.requests.find((r) => r.headers['x-svc-event-id'] === out.event_id);
    const header = String(got?.headers['x-svc-signature']);
    expect(header.match(/v1=/g)?.length).toBe(2);
    const now = Math.floor(clock.now() / 1000);
    expect(verifySignature(header, got?.body ?? '', ep.secret, { now }).ok).toBe(true);
    expect(verifySignature(header, got?.body ?? '', rotated.secret, { now }).ok).toBe(true);
  });

  it('reports a failing receiver, a refused connection and a refused target as the outcome, not as an API error', async () => {
    const failing = await create(`${rx.url}/status/500`);
    const res = await call('POST', `/v1/webhooks/${failing.id}/test`, owner);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ delivered: false, status_code: 500, response_excerpt: 'answer 500', error: 'HTTP 500' });
    // Failed tests are outside the auto-disable window and the delivery log.
    expect((await call('GET', `/v1/webhooks/${failing.id}`, owner)).json().data.status).toBe('enabled');
    expect((await call('GET', `/v1/webhooks/${failing.id}/deliveries`, owner)).json().data).toEqual([]);

    const redirect = await create(`${rx.url}/redirect`);
    expect((await call('POST', `/v1/webhooks/${redirect.id}/test`, owner)).json().data).toMatchObject({ delivered: false, status_code: 302 });

    const closed = await startReceiver();
    const gone = await create(`${closed.url}/x`);
    await closed.close();
    expect((await call('POST', `/v1/webhooks/${gone.id}/test`, owner)).json().data).toMatchObject({ delivered: false, status_code: null, error: 'connection refused (ECONNREFUSED)' });

    // A deployment that refuses private targets refuses them for tests too.
    const strict = await testApp({ clock, config: { webhookAllowPrivate: false } });
    try {
      const k = await strict.key({ products: ['live'] });
      const ep = (await strict.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth(k), payload: { url: 'https://unresolvable.invalid/x', tier: 'confirmed' } })).json().data;
      await strict.db.kysely.updateTable('webhook_endpoints').set({ url: `${rx.url}/sneaky` }).where('id', '=', ep.id).execute();
      const n = rx.requests.length;
      const out = (await strict.app.inject({ method: 'POST', url: `/v1/webhooks/${ep.id}/test`, headers: auth(k) })).json().data;
      expect(out).toMatchObject({ delivered: false, status_code: null });
      expect(out.error).toMatch(/^target refused/);
      expect(rx.requests.length).toBe(n);
    } finally {
      await strict.close();
    }
  });

  it('works on a disabled endpoint, so a receiver can be checked before re-enabling it', async () => {
    const ep = await create(`${rx.url}/was-gone`);
    await t.db.kysely.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'gone' }).where('id', '=', ep.id).execute();
    const out = (await call('POST', `/v1/webhooks/${ep.id}/test`, owner)).json().data;
    expect(out).toMatchObject({ delivered: true, status_code: 200 });
    expect((await call('GET', `/v1/webhooks/${ep.id}`, owner)).json().data.status).toBe('disabled');
  });

  it("is a 404 for an unknown endpoint and for another key's endpoint, and sends nothing", async () => {
    const ep = await create(`${rx.url}/private-to-owner`);
    const other = await t.key({ products: ['live'] });
    const n = rx.requests.length;
    expectError(await call('POST', `/v1/webhooks/${ep.id}/test`, other), 404, 'not_found', { code: 'resource_not_found', param: 'id' });
    expectError(await call('POST', '/v1/webhooks/we_000000000000000000000000/test', owner), 404, 'not_found', { param: 'id' });
    expectError(await call('POST', `/v1/webhooks/${ep.id}/test`, null), 401, 'authentication_error', { code: 'missing_api_key' });
    expectError(await call('POST', `/v1/webhooks/${ep.id}/test`, 'svc_test_0000000000000000000000000000dead'), 401, 'authentication_error', { code: 'invalid_api_key' });
    const noLive = await t.key({ products: ['archive', 'report'] });
    expectError(await call('POST', `/v1/webhooks/${ep.id}/test`, noLive), 403, 'permission_error', { code: 'product_not_in_plan' });
    // A body or query it does not take is a 400, not ignored.
    expectError(await call('POST', `/v1/webhooks/${ep.id}/test?x=1`, owner), 400, 'invalid_request');
    expect(rx.requests.length).toBe(n);
  });
});
