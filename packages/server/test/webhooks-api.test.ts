import { promises as dns } from 'node:dns';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { expectError } from './contract.js';
import { auth, testApp, type TestApp } from './helpers.js';

type Json = Record<string, unknown>;

describe('webhook API', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.now());
  let owner: string;
  let other: string;
  const PUBLIC = 'https://93.184.215.14/hooks/svc';

  beforeAll(async () => {
    t = await testApp({ clock });
    owner = await t.key({ products: ['live'] });
    other = await t.key({ products: ['live'] });
  });
  afterAll(async () => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string | null, body?: unknown) =>
    t.app.inject({ method, url, headers: key ? auth(key) : {}, ...(body !== undefined ? { payload: body as Json } : {}) });
  const create = async (body: Json = { url: PUBLIC, tier: 'confirmed' }, key = owner) => {
    const res = await call('POST', '/v1/webhooks', key, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as Json & { id: string; secret: string };
  };

  it('registers an endpoint and shows the secret only once', async () => {
    const res = await call('POST', '/v1/webhooks', owner, { url: PUBLIC, sports: ['soccer', 'basketball', 'soccer'], tier: 'confirmed', description: 'prod' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    const ep = res.json().data;
    expect(ep).toMatchObject({ url: PUBLIC, sports: ['soccer', 'basketball'], tier: 'confirmed', status: 'enabled', description: 'prod', disabled_reason: null });
    expect(ep.id).toMatch(/^we_[A-Za-z0-9]{24}$/);
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(ep.created_at).toBe(new Date(clock.now()).toISOString());

    const got = (await call('GET', `/v1/webhooks/${ep.id}`, owner)).json().data;
    expect(got).not.toHaveProperty('secret');
    expect(got).toMatchObject({ id: ep.id, url: PUBLIC, status: 'enabled' });
    const list = (await call('GET', '/v1/webhooks', owner)).json();
    expect(list.next_cursor).toBeNull();
    expect(list.data.map((e: Json) => e.id)).toContain(ep.id);
    for (const e of list.data) expect(e).not.toHaveProperty('secret');
  });

  it('takes sports as optional (null = every sport in scope) and names bad fields', async () => {
    expect((await create()).sports).toBeNull();
    expectError(await call('POST', '/v1/webhooks', owner, { tier: 'confirmed' }), 400, 'invalid_request', { code: 'missing_field', param: 'url' });
    expectError(await call('POST', '/v1/webhooks', owner, { url: PUBLIC }), 400, 'invalid_request', { code: 'missing_field', param: 'tier' });
    expectError(await call('POST', '/v1/webhooks', owner, { url: PUBLIC, tier: 'provisional' }), 400, 'invalid_request', { code: 'unsupported_tier', param: 'tier' });
    expectError(await call('POST', '/v1/webhooks', owner, { url: PUBLIC, tier: 'confirmed', sports: ['curling'] }), 400, 'invalid_request', { code: 'unknown_sport', param: 'sports[0]' });
    expectError(await call('POST', '/v1/webhooks', owner, { url: PUBLIC, tier: 'confirmed', sports: [] }), 400, 'invalid_request', { param: 'sports' });
    expectError(await call('POST', '/v1/webhooks', owner, { url: PUBLIC, tier: 'confirmed', secret: 'mine' }), 400, 'invalid_request', { code: 'unknown_field', param: 'secret' });
    for (const url of ['/relative', 'not a url', 'ftp://93.184.215.14/x', 'http://93.184.215.14/x', 'https://user:pw@93.184.215.14/x']) {
      expectError(await call('POST', '/v1/webhooks', owner, { url, tier: 'confirmed' }), 400, 'invalid_request', { code: 'invalid_url', param: 'url' });
    }
    const form = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...auth(owner), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'url=x' });
    expectError(form, 415, 'unsupported_media_type');
  });

  it('refuses loopback, private, link-local and reserved targets (SSRF)', async () => {
    const targets = [
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:0:7f00:1]/hook',
      'https://[::ffff:0:a00:1]/hook',
      'https://[::ffff:0:a9fe:a9fe]/hook',
      'https://[::ffff:0:c0a8:101]/hook',
      'https://93.184.215.14:0/hook',
      'https://0x7f.1/hook',
      'https://localhost/hook',
    ];
    for (const url of targets) {
      const res = await call('POST', '/v1/webhooks', owner, { url, tier: 'confirmed' });
      expectError(res, 400, 'invalid_request', { code: 'invalid_url', param: 'url' });
    }
    // A name that resolves to loopback is refused after resolution (this machine's own name).
    const name = os.hostname();
    const addrs = await dns.lookup(name, { all: true }).catch(() => []);
    if (addrs.length > 0 && addrs.every((a) => a.address.startsWith('127.') || a.address === '::1')) {
      const res = await call('POST', '/v1/webhooks', owner, { url: `https://${name}/hook`, tier: 'confirmed' });
      expectError(res, 400, 'invalid_request', { code: 'invalid_url', param: 'url' });
      expect(res.json().error.message).toMatch(/resolves to/);
    }
    // The same refusal on PATCH.
    const ep = await create();
    expectError(await call('PATCH', `/v1/webhooks/${ep.id}`, owner, { url: 'https://10.0.0.1/x' }), 400, 'invalid_request', { param: 'url' });
  });

  it('needs a valid key with the live product, and sports within its scope', async () => {
    const ep = await create();
    const routes: ['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?][] = [
      ['POST', '/v1/webhooks', { url: PUBLIC, tier: 'confirmed' }],
      ['GET', '/v1/webhooks'],
      ['GET', `/v1/webhooks/${ep.id}`],
      ['PATCH', `/v1/webhooks/${ep.id}`, { description: 'x' }],
      ['DELETE', `/v1/webhooks/${ep.id}`],
      ['GET', `/v1/webhooks/${ep.id}/deliveries`],
      ['GET', `/v1/webhooks/${ep.id}/deliveries/dlv_x`],
      ['POST', `/v1/webhooks/${ep.id}/replay`, { delivery_id: 'dlv_x' }],
      ['POST', `/v1/webhooks/${ep.id}/enable`],
      ['POST', `/v1/webhooks/${ep.id}/rotate-secret`],
      ['POST', `/v1/webhooks/${ep.id}/test`],
      ['GET', '/v1/notifications'],
    ];
    const archiveOnly = await t.key({ products: ['archive', 'report'] });
    for (const [method, url, body] of routes) {
      expectError(await call(method, url, null, body), 401, 'authentication_error', { code: 'missing_api_key' });
      expectError(await call(method, url, 'svc_test_0000000000000000000000000000dead', body), 401, 'authentication_error', { code: 'invalid_api_key' });
      expectError(await call(method, url, archiveOnly, body), 403, 'permission_error', { code: 'product_not_in_plan' });
    }
    const basketballOnly = await t.key({ products: ['live'], sports: ['basketball'] });
    expectError(await call('POST', '/v1/webhooks', basketballOnly, { url: PUBLIC, tier: 'confirmed', sports: ['basketball', 'soccer'] }), 403, 'permission_error', {
      code: 'sport_not_in_scope',
      param: 'sports[1]',
    });
    const mine = await create({ url: PUBLIC, tier: 'confirmed', sports: ['basketball'] }, basketballOnly);
    expectError(await call('PATCH', `/v1/webhooks/${mine.id}`, basketballOnly, { sports: ['soccer'] }), 403, 'permission_error', { code: 'sport_not_in_scope' });
    // Still there, untouched.
    expect((await call('GET', `/v1/webhooks/${ep.id}`, owner)).statusCode).toBe(200);
  });

  it("treats another key's endpoint as not found, everywhere", async () => {
    const ep = await create();
    const url = `/v1/webhooks/${ep.id}`;
    for (const [method, path, body] of [
      ['GET', url],
      ['PATCH', url, { description: 'mine now' }],
      ['DELETE', url],
      ['GET', `${url}/deliveries`],
      ['GET', `${url}/deliveries/dlv_x`],
      ['POST', `${url}/replay`, { delivery_id: 'dlv_x' }],
      ['POST', `${url}/enable`],
      ['POST', `${url}/rotate-secret`],
    ] as const) {
      expectError(await call(method, path, other, body), 404, 'not_found', { param: 'id' });
    }
    expect((await call('GET', '/v1/webhooks', other)).json().data.map((e: Json) => e.id)).not.toContain(ep.id);
    const still = (await call('GET', url, owner)).json().data;
    expect(still.description).toBeNull();
    expectError(await call('GET', '/v1/webhooks/we_doesnotexist', owner), 404, 'not_found');
  });

  it('updates url, sports and description; deletes', async () => {
    const ep = await create();
    clock.advance(1000);
    const res = await call('PATCH', `/v1/webhooks/${ep.id}`, owner, { url: 'https://93.184.215.15/v2', sports: ['soccer'], description: 'v2' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ url: 'https://93.184.215.15/v2', sports: ['soccer'], description: 'v2', updated_at: new Date(clock.now()).toISOString() });
    expect(res.json().data).not.toHaveProperty('secret');
    const cleared = (await call('PATCH', `/v1/webhooks/${ep.id}`, owner, { sports: null, description: null })).json().data;
    expect(cleared).toMatchObject({ sports: null, description: null });
    expectError(await call('PATCH', `/v1/webhooks/${ep.id}`, owner, { status: 'enabled' }), 400, 'invalid_request', { param: 'status' });
    expectError(await call('PATCH', `/v1/webhooks/${ep.id}`, owner, { sports: ['chess'] }), 400, 'invalid_request', { param: 'sports[0]' });
    const del = await call('DELETE', `/v1/webhooks/${ep.id}`, owner);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ data: { id: ep.id, deleted: true } });
    expectError(await call('GET', `/v1/webhooks/${ep.id}`, owner), 404, 'not_found');
    expectError(await call('DELETE', `/v1/webhooks/${ep.id}`, owner), 404, 'not_found');
  });

  it('rotates the secret with 24 h of overlap', async () => {
    const ep = await create();
    const res = await call('POST', `/v1/webhooks/${ep.id}/rotate-secret`, owner);
    expect(res.statusCode).toBe(200);
    const rotated = res.json().data;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(ep.secret);
    expect(rotated.previous_secret_expires_at).toBe(new Date(clock.now() + 86_400_000).toISOString());
    clock.advance(86_400_001);
    expect((await call('GET', `/v1/webhooks/${ep.id}`, owner)).json().data.previous_secret_expires_at).toBeNull();
  });

  it('limits endpoints per plan', async () => {
    const free = await t.key({ products: ['live'], plan: 'free' });
    await create({ url: PUBLIC, tier: 'confirmed' }, free);
    await create({ url: PUBLIC, tier: 'confirmed' }, free);
    expectError(await call('POST', '/v1/webhooks', free, { url: PUBLIC, tier: 'confirmed' }), 403, 'permission_error', { code: 'webhook_endpoint_limit' });
  });

  it('paginates endpoints with a keyset cursor and refuses bad limits and cursors', async () => {
    const k = await t.key({ products: ['live'] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ url: PUBLIC, tier: 'confirmed' }, k)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Json[]; next_cursor: string | null } = (await call('GET', `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, k)).json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((e: Json) => String(e.id)));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expectError(await call('GET', '/v1/webhooks?limit=0', k), 400, 'invalid_request', { param: 'limit' });
    expectError(await call('GET', '/v1/webhooks?limit=1001', k), 400, 'invalid_request', { param: 'limit' });
    expectError(await call('GET', '/v1/webhooks?cursor=garbage', k), 400, 'invalid_request', { code: 'invalid_cursor', param: 'cursor' });
    expectError(await call('GET', '/v1/webhooks?sport=soccer', k), 400, 'invalid_request', { code: 'unknown_parameter', param: 'sport' });
  });

  it('lists deliveries and validates their filters', async () => {
    const ep = await create();
    const empty = await call('GET', `/v1/webhooks/${ep.id}/deliveries?status=failed`, owner);
    expect(empty.json()).toEqual({ data: [], next_cursor: null });
    expectError(await call('GET', `/v1/webhooks/${ep.id}/deliveries?status=lost`, owner), 400, 'invalid_request', { param: 'status' });
    expectError(await call('GET', `/v1/webhooks/${ep.id}/deliveries?state=failed`, owner), 400, 'invalid_request', { param: 'state' });
    expectError(await call('GET', `/v1/webhooks/${ep.id}/deliveries?limit=5000`, owner), 400, 'invalid_request', { param: 'limit' });
    expectError(await call('GET', `/v1/webhooks/${ep.id}/deliveries/dlv_nope`, owner), 404, 'not_found', { param: 'delivery_id' });
  });

  it('validates replay requests', async () => {
    const ep = await create();
    const url = `/v1/webhooks/${ep.id}/replay`;
    expectError(await call('POST', url, owner, {}), 400, 'invalid_request', { code: 'missing_field', param: 'delivery_id' });
    expectError(await call('POST', url, owner, { delivery_id: 'dlv_nope' }), 404, 'not_found', { param: 'delivery_id' });
    expectError(await call('POST', url, owner, { delivery_id: 'dlv_x', from: '2026-01-01T00:00:00Z' }), 400, 'invalid_request', { param: 'from' });
    expectError(await call('POST', url, owner, { from: 'yesterday', to: '2026-01-01T00:00:00Z' }), 400, 'invalid_request', { param: 'from' });
    expectError(await call('POST', url, owner, { from: '2026-01-01T00:00:00Z' }), 400, 'invalid_request', { param: 'to' });
    const now = clock.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expectError(await call('POST', url, owner, { from: iso(now), to: iso(now - 1000) }), 400, 'invalid_request', { code: 'invalid_range', param: 'from' });
    expectError(await call('POST', url, owner, { from: iso(now - 40 * 86_400_000), to: iso(now) }), 400, 'invalid_request', { code: 'outside_replay_window', param: 'from' });
    const ok = await call('POST', url, owner, { from: iso(now - 60_000), to: iso(now - 30_000) });
    expect(ok.statusCode).toBe(202);
    expect(ok.json()).toEqual({ data: { replayed: 0, delivery_ids: [] } });
  });

  it('shows no notifications to a key that has none', async () => {
    const k = await t.key({ products: ['live'] });
    const res = await call('GET', '/v1/notifications', k);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], next_cursor: null });
    expectError(await call('GET', '/v1/notifications?limit=0', k), 400, 'invalid_request', { param: 'limit' });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json();
    for (const p of ['/v1/webhooks', '/v1/webhooks/{id}', '/v1/webhooks/{id}/deliveries', '/v1/webhooks/{id}/deliveries/{delivery_id}', '/v1/webhooks/{id}/replay', '/v1/webhooks/{id}/enable', '/v1/webhooks/{id}/rotate-secret', '/v1/notifications']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});
