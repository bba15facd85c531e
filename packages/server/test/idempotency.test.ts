import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { IDEMPOTENCY_TTL_MS, IN_FLIGHT_LEASE_MS, requestFingerprint } from '../src/http/idempotency.js';
import { expectError } from './contract.js';
import { auth, engines, testApp, type TestApp } from './helpers.js';

type Json = Record<string, unknown>;
const PUBLIC = 'https://93.184.215.14/hooks/idem';

describe.each(engines())('Idempotency-Key on %s', (engine) => {
  let t: TestApp;
  const clock = new ManualClock(Date.now());
  let owner: string;
  let other: string;
  let n = 0;
  const fresh = () => `idem-${engine}-${++n}`;

  beforeAll(async () => {
    t = await testApp({ engine, clock });
    owner = await t.key({ products: ['live'] });
    other = await t.key({ products: ['live'] });
  });
  afterAll(async () => t.close());

  const post = (url: string, key: string, idem: string | undefined, body?: Json) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(key), ...(idem !== undefined ? { 'idempotency-key': idem } : {}) },
      ...(body !== undefined ? { payload: body } : {}),
    });
  const endpointsOf = async (key: string): Promise<Json[]> => (await t.app.inject({ method: 'GET', url: '/v1/webhooks?limit=1000', headers: auth(key) })).json().data;

  it('runs the first request and replays its answer for the same key and body', async () => {
    const idem = fresh();
    const body = { url: `${PUBLIC}/1`, tier: 'confirmed' };
    const first = await post('/v1/webhooks', owner, idem, body);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/v1/webhooks', owner, idem, body);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['original-request-id']).toBe(first.headers['x-request-id']);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.body).toBe(first.body);
    expect((await endpointsOf(owner)).filter((e) => e.url === body.url)).toHaveLength(1);
  });

  it('refuses the same key with another body, or on another path, and runs neither', async () => {
    const idem = fresh();
    expect((await post('/v1/webhooks', owner, idem, { url: `${PUBLIC}/2`, tier: 'confirmed' })).statusCode).toBe(201);
    const before = (await endpointsOf(owner)).length;
    expectError(await post('/v1/webhooks', owner, idem, { url: `${PUBLIC}/2b`, tier: 'confirmed' }), 409, 'conflict', { code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const ep = (await endpointsOf(owner))[0];
    expectError(await post(`/v1/webhooks/${String(ep.id)}/rotate-secret`, owner, idem), 409, 'conflict', { code: 'idempotency_key_reused' });
    expect((await endpointsOf(owner)).length).toBe(before);
    expect((await endpointsOf(owner)).some((e) => e.url === `${PUBLIC}/2b`)).toBe(false);
  });

  it('keeps keys apart per API key', async () => {
    const idem = fresh();
    const body = { url: `${PUBLIC}/3`, tier: 'confirmed' };
    const mine = await post('/v1/webhooks', owner, idem, body);
    const theirs = await post('/v1/webhooks', other, idem, body);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().data.id).not.toBe(mine.json().data.id);
    // And another key's different body under the same Idempotency-Key is not a reuse either.
    expect((await post('/v1/webhooks', other, fresh(), { url: `${PUBLIC}/3b`, tier: 'confirmed' })).statusCode).toBe(201);
  });

  it('takes keys of 1 to 255 characters and refuses others with a 400 naming the header', async () => {
    const body = { url: `${PUBLIC}/4`, tier: 'confirmed' };
    const before = (await endpointsOf(owner)).length;
    expectError(await post('/v1/webhooks', owner, 'k'.repeat(256), body), 400, 'invalid_request', { code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
    expectError(await post('/v1/webhooks', owner, '', body), 400, 'invalid_request', { code: 'invalid_idempotency_key' });
    expect((await endpointsOf(owner)).length).toBe(before);
    const longest = `${engine}-${'k'.repeat(255 - engine.length - 1)}`;
    expect(longest).toHaveLength(255);
    expect((await post('/v1/webhooks', owner, longest, body)).statusCode).toBe(201);
    expect((await post('/v1/webhooks', owner, longest, body)).headers['idempotent-replayed']).toBe('true');
  });

  it('forgets a key after 24 hours by the clock', async () => {
    const idem = fresh();
    const body = { url: `${PUBLIC}/5`, tier: 'confirmed' };
    const first = await post('/v1/webhooks', owner, idem, body);
    clock.advance(IDEMPOTENCY_TTL_MS - 1);
    const within = await post('/v1/webhooks', owner, idem, body);
    expect(within.headers['idempotent-replayed']).toBe('true');
    expect(within.body).toBe(first.body);
    clock.advance(1);
    const after = await post('/v1/webhooks', owner, idem, body);
    expect(after.statusCode).toBe(201);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(after.json().data.id).not.toBe(first.json().data.id);
    // The new entry starts its own 24 h: another body under the key is a reuse again.
    expectError(await post('/v1/webhooks', owner, idem, { url: `${PUBLIC}/5b`, tier: 'confirmed' }), 409, 'conflict', { code: 'idempotency_key_reused' });
    // Expired entries are purged from the table, not only ignored.
    clock.advance(IDEMPOTENCY_TTL_MS);
    await post('/v1/webhooks', owner, fresh(), { url: `${PUBLIC}/5c`, tier: 'confirmed' });
    await expect
      .poll(async () => (await t.db.kysely.selectFrom('idempotency_keys').select('idempotency_key').where('idempotency_key', '=', idem).execute()).length)
      .toBe(0);
  });

  it('replays an error the operation answered, and records nothing for a request its schema refused', async () => {
    const idem = fresh();
    const missing = '/v1/webhooks/we_000000000000000000000000/enable';
    const first = await post(missing, owner, idem);
    expectError(first, 404, 'not_found', { code: 'resource_not_found' });
    const again = await post(missing, owner, idem);
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(again.headers['original-request-id']).toBe(first.json().error.request_id);

    const refused = fresh();
    expectError(await post('/v1/webhooks', owner, refused, { url: `${PUBLIC}/6`, tier: 'confirmed', secret: 'x' }), 400, 'invalid_request', { code: 'unknown_field' });
    const ok = await post('/v1/webhooks', owner, refused, { url: `${PUBLIC}/6`, tier: 'confirmed' });
    expect(ok.statusCode).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('records nothing for a body its schema refused on routes that check the body themselves (attachValidation)', async () => {
    const mine = await t.key({ products: ['live'] });
    const ep = (await post('/v1/webhooks', mine, undefined, { url: `${PUBLIC}/8`, tier: 'confirmed' })).json().data;
    const idem = fresh();
    expectError(await post(`/v1/webhooks/${String(ep.id)}/replay`, mine, idem, { delivery_id: 42 }), 400, 'invalid_request');
    const fixed = await post(`/v1/webhooks/${String(ep.id)}/replay`, mine, idem, {
      from: new Date(clock.now() - 3_600_000).toISOString(),
      to: new Date(clock.now()).toISOString(),
    });
    expect(fixed.statusCode).toBe(202);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers a duplicate of a request still in flight with a 409, and lets a dead one be taken over', async () => {
    const idem = fresh();
    const body = { url: `${PUBLIC}/7`, tier: 'confirmed' };
    const keyId = (await t.services.auth.authenticate(owner)).keyId;
    // Another node (or this one, a moment earlier) holds the key while it runs the same request.
    const claim = await t.services.idempotency.claim({
      keyId,
      idempotencyKey: idem,
      fingerprint: requestFingerprint('POST', '/v1/webhooks', body),
      now: clock.now(),
      ttlMs: IDEMPOTENCY_TTL_MS,
      inFlightLeaseMs: IN_FLIGHT_LEASE_MS,
    });
    expect(claim.kind).toBe('claimed');
    expectError(await post('/v1/webhooks', owner, idem, body), 409, 'conflict', { code: 'idempotency_key_in_use', param: 'Idempotency-Key' });
    expect((await endpointsOf(owner)).some((e) => e.url === body.url)).toBe(false);
    clock.advance(IN_FLIGHT_LEASE_MS);
    const taken = await post('/v1/webhooks', owner, idem, body);
    expect(taken.statusCode).toBe(201);
    expect((await post('/v1/webhooks', owner, idem, body)).body).toBe(taken.body);
  });

  it('leaves requests without the header alone, and needs the key before anything else', async () => {
    const body = { url: `${PUBLIC}/8`, tier: 'confirmed' };
    expect((await post('/v1/webhooks', owner, undefined, body)).statusCode).toBe(201);
    expect((await post('/v1/webhooks', owner, undefined, body)).statusCode).toBe(201);
    expect((await endpointsOf(owner)).filter((e) => e.url === body.url)).toHaveLength(2);
    expectError(await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'idempotency-key': fresh() }, payload: body }), 401, 'authentication_error');
  });
});
