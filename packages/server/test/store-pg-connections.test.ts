import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { engines, freshDb, tmpDir, until } from './helpers.js';
import { serveSvc } from './process.js';
import { PG_ADMIN_URL } from './templates.setup.js';

/** Runs a `pg_terminate_backend` query as an administrator (or a restart) would; returns its row count. */
async function asAdmin(query: string, params: unknown[]): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    return (await admin.query(query, params)).rows.length;
  } finally {
    await admin.end();
  }
}

/** Ends every server process of `database` but the caller's. */
const terminateBackends = (database: string): Promise<number> =>
  asAdmin('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
const terminateBackend = (pid: number): Promise<number> => asAdmin('select pg_terminate_backend($1)', [pid]);

describe.skipIf(!engines().includes('postgres'))('PostgreSQL connections the server ends', () => {
  it('cost neither the process nor the next query: the pool reports the broken idle connection and opens another', async () => {
    const errors: Error[] = [];
    const { db, databaseUrl } = await freshDb('postgres', { onConnectionError: (err) => errors.push(err) });
    try {
      // Two queries at once leave two idle connections in the pool.
      await Promise.all([sql`select pg_sleep(0.05)`.execute(db.kysely), sql`select pg_sleep(0.05)`.execute(db.kysely)]);
      const database = new URL(databaseUrl ?? '').pathname.slice(1);
      expect(await terminateBackends(database)).toBeGreaterThanOrEqual(2);
      await until(() => errors.length >= 2, 5_000, 'the pool to hear of both terminations');
      expect(errors[0].message).toMatch(/terminating connection/);

      const { rows } = await sql<{ n: number }>`select 41 + 1 as n`.execute(db.kysely);
      expect(rows[0].n).toBe(42);
    } finally {
      await db.close();
    }
  });

  it('cost neither the process nor the next query when the connection was checked out: its query fails, the pool reports it and opens another', async () => {
    const errors: Error[] = [];
    const { db } = await freshDb('postgres', { onConnectionError: (err) => errors.push(err) });
    try {
      // A duty holds a connection (checked out of the pool, between two statements) when the
      // server ends it.
      const held = db.kysely.connection().execute(async (conn) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
        await terminateBackend(rows[0].pid);
        await until(() => errors.length >= 1, 5_000, 'the pool to hear of the termination');
        await sql`select 1`.execute(conn);
      });
      await expect(held).rejects.toThrow(/Client has encountered a connection error|terminat/);
      expect(errors.length).toBe(1);

      const { rows } = await sql<{ n: number }>`select 41 + 1 as n`.execute(db.kysely);
      expect(rows[0].n).toBe(42);
    } finally {
      await db.close();
    }
  });

  it('leave a running `svc serve` serving: it logs the failure, without the connection string, answers 503 store_unavailable (never 500) while it meets ended connections, then from the database', async () => {
    const { db, databaseUrl } = await freshDb('postgres');
    await db.close();
    if (!databaseUrl) throw new Error('unreachable');
    const database = new URL(databaseUrl).pathname.slice(1);
    const svc = await serveSvc(tmpDir(), { SVC_DATABASE_URL: databaseUrl, SVC_SECRET_KEY: '5e'.repeat(32), SVC_BOOTSTRAP_KEY: 'svc_test_PgConnPgConnPgConn0001' });
    try {
      expect(await terminateBackends(database)).toBeGreaterThanOrEqual(1);
      await until(() => svc.output().includes('a pooled connection failed'), 10_000, 'the failure to be logged');
      expect(svc.output()).not.toContain(databaseUrl);
      // Reference data comes from the database, through a new connection. A request may still
      // meet a connection whose end the node has not heard of yet: that one is a 503
      // store_unavailable (never a 500), and the node heals by itself.
      const venues = () => fetch(`${svc.base}/v1/venues?limit=5`, { headers: { authorization: 'Bearer svc_test_PgConnPgConnPgConn0001' } });
      let res = await venues();
      for (let i = 0; i < 20 && res.status === 503; i++) {
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
        res = await venues();
      }
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);

      // Again while requests hold connections: those may fail, the process may not.
      const inFlight = Array.from({ length: 40 }, (_, i) =>
        fetch(`${svc.base}/v1/venues?limit=${i + 1}`, { headers: { authorization: 'Bearer svc_test_PgConnPgConnPgConn0001' } }).then((r) => r.status),
      );
      await terminateBackends(database);
      const statuses = await Promise.all(inFlight);
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      let after = await venues();
      for (let i = 0; i < 20 && after.status === 503; i++) after = await venues();
      expect(after.status).toBe(200);
    } finally {
      await svc.stop();
    }
  }, 120_000);
});
