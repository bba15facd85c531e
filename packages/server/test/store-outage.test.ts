import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ARCHIVE_VERSION } from '../src/archive/index.js';
import { openDb } from '../src/store/sql/db.js';
import { tmpDir, until } from './helpers.js';
import { OwnPostgres } from './own-postgres.js';
import { serveSvc, type SvcProcess } from './process.js';

const KEY = 'svc_test_StoreOutageStoreOutage01';
const PUBLIC_HOOK = 'https://hooks.example.com/svc';

/**
 * A running `svc serve` whose PostgreSQL stops and comes back (docs/operations.md, "Faults"): the
 * process stays up, calls that need the database answer 503 `store_unavailable` without the
 * driver's words, /readyz names the database, and the node heals by itself once the server is back.
 */
describe('PostgreSQL going away under a running node', () => {
  let own: OwnPostgres;
  let svc: SvcProcess;
  let databaseUrl: string;
  beforeAll(async () => {
    own = await OwnPostgres.start();
    databaseUrl = await own.url();
    // The schema at head and the archive marked present: the node starts without importing it.
    const db = await openDb({ dataDir: tmpDir(), databaseUrl });
    await db.kysely.insertInto('meta').values({ key: 'archive', value: ARCHIVE_VERSION }).execute();
    await db.close();
    svc = await serveSvc(tmpDir(), { SVC_DATABASE_URL: databaseUrl, SVC_SIMULATOR: 'off', SVC_SECRET_KEY: '7a'.repeat(32), SVC_BOOTSTRAP_KEY: KEY });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await own?.remove();
  });

  /** A call that fails the test rather than hanging when the node does not answer in time. */
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${svc.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });

  it('answers 503 store_unavailable while it is away, /readyz names the database, and heals without a restart', async () => {
    expect((await call('GET', '/readyz')).status).toBe(200);
    expect((await call('GET', '/v1/venues?limit=2')).status).toBe(200);

    await own.stop();
    // A read, a write and the key lookup in front of them all need the database.
    for (const [method, path, body] of [
      ['GET', '/v1/venues?limit=3', undefined],
      ['GET', '/v1/competitions?league=wc&season=2022', undefined],
      ['POST', '/v1/webhooks', { url: PUBLIC_HOOK, tier: 'confirmed' }],
    ] as const) {
      const res = await call(method, path, body);
      const text = await res.text();
      expect(res.status, `${method} ${path}: ${text}`).toBe(503);
      const { error } = JSON.parse(text) as { error: { type: string; code: string; message: string; request_id: string } };
      expect(error).toMatchObject({ type: 'unavailable', code: 'store_unavailable' });
      expect(error.request_id).toBeTruthy();
      // Never the driver's words (nor where the database lives).
      expect(error.message).not.toMatch(/ECONN|terminat|connect ECONN|5432|127\.0\.0\.1|postgres|sqlstate|57P0/i);
    }
    // A stream upgrade is served from what the node holds, or refused in the documented body: never a 500.
    const upgrade = await new Promise<{ status: number; body: string }>((resolve) => {
      const ws = new WebSocket(`${svc.base.replace('http', 'ws')}/v1/stream?sport=soccer`, { headers: { authorization: `Bearer ${KEY}` } });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('open', () => {
        ws.close();
        resolve({ status: 101, body: '' });
      });
      ws.on('error', () => undefined);
    });
    if (upgrade.status !== 101) {
      expect(upgrade.status, upgrade.body).toBe(503);
      expect(JSON.parse(upgrade.body).error).toMatchObject({ type: 'unavailable', code: 'store_unavailable' });
    }
    const ready = await call('GET', '/readyz');
    expect(ready.status).toBe(503);
    const readyBody = (await ready.json()) as { error: { code: string; message: string } };
    expect(readyBody.error.code).toBe('not_ready');
    expect(readyBody.error.message).toContain('database');
    expect((await call('GET', '/livez')).status).toBe(200);
    expect(svc.child.exitCode).toBeNull();
    await own.resume();
    await until(async () => (await call('GET', '/readyz')).status === 200, 30_000, 'the node to be ready again within 30 s');
    // Nothing was stored while the database was away.
    const list = await call('GET', '/v1/webhooks');
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
    expect((await call('POST', '/v1/webhooks', { url: PUBLIC_HOOK, tier: 'confirmed' })).status).toBe(201);
    expect((await call('GET', '/v1/venues?limit=2')).status).toBe(200);
    expect(svc.output()).not.toContain(databaseUrl);
  }, 120_000);
});
