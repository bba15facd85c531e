import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/domain/keys.js';
import { auth, listen, testApp, type TestApp } from './helpers.js';
import { connect, type StreamClient } from './ws-client.js';

/** Holes a hostile client found in the stream, each closed through real sockets. */
describe('stream hardening', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  const open: StreamClient[] = [];

  beforeAll(async () => {
    t = await testApp({ streamLimits: { keyCheckMs: 200 } });
    const at = await listen(t);
    base = at.http;
    wsBase = at.ws;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const stream = async (query: string, key: string) => {
    const c = await connect(`${wsBase}/v1/stream${query}`, key);
    open.push(c);
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };
  const keyId = async (key: string) => {
    const found = await t.services.keys.findByHash(hashKey(key));
    if (!found) throw new Error('key not stored');
    return found.key.id;
  };

  it('closes the open sockets of a revoked key with 4401 and refuses its next upgrade', async () => {
    const key = await t.key({ products: ['live'] });
    const other = await t.key({ products: ['live'] });
    const revoked = await stream('', key);
    const kept = await stream('', other);
    // Authenticated a moment ago: the principal is in the authenticator's cache.
    expect((await fetch(`${base}/v1/me`, { headers: auth(key) })).status).toBe(200);
    expect(await t.services.keys.revoke(await keyId(key), new Date())).toBe(true);
    await revoked.until((c) => c.closeCode !== null, 10_000, 'the revoked key’s socket to close');
    expect(revoked.closeCode).toBe(4401);
    expect(revoked.ws.readyState).toBe(revoked.ws.CLOSED);
    expect(kept.closeCode).toBeNull();
    // The cache does not keep the revoked key alive on this node.
    const again = await connect(`${wsBase}/v1/stream`, key).catch((e: { status: number; body: { error: { code: string } } }) => e);
    expect(again).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    expect((await fetch(`${base}/v1/me`, { headers: auth(key) })).status).toBe(401);
  });
});
