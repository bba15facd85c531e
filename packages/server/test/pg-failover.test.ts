import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { openDb } from '../src/store/sql/db.js';
import { storeFault } from '../src/store/sql/faults.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { OwnPostgres } from './own-postgres.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { serveSvc, type SvcProcess } from './process.js';
import { keysOf, tmpDir } from './helpers.js';

/**
 * A PostgreSQL failover under a running `svc serve` (docs/operations.md, "Failures and what svc
 * does"): a primary and its streaming replica of the test's own, svc given both in one URL with
 * `target_session_attrs=read-write`, reports flowing from four clients; the primary is stopped and
 * the replica promoted. svc writes to the new primary within 30 s without a restart, every report
 * in between is answered 202 or 503 (never a 500), and every acknowledged report is stored.
 */
const ADMIN = 'svc_test_FailoverFailoverFailover0001';
const procs: SvcProcess[] = [];
const clusters: OwnPostgres[] = [];
const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
  for (const p of procs) await p.stop();
  for (const c of clusters) await c.remove();
});

describe('PostgreSQL failover', () => {
  if (!inject('redisUrl') && process.env.CI) throw new Error('the failover test needs Redis in CI');
  it.runIf(Boolean(inject('redisUrl')))('follows a promoted replica within 30 s; writes in between are 503, none lost', { timeout: 240_000 }, async () => {
    const primary = await OwnPostgres.start();
    clusters.push(primary);
    // The archive restored before the replica is made, so the replica starts from it too.
    const oneHost = await primary.seeded('svc');
    const replica = await primary.replica();
    clusters.push(replica);
    const url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${replica.port}/svc?target_session_attrs=read-write`;
    const redisUrl = inject('redisUrl');
    if (!redisUrl) throw new Error('the failover test runs two nodes, which need Redis');
    const receiver = await startReceiver();
    receivers.push(receiver);
    const env = { SVC_WEBHOOK_ALLOW_PRIVATE: 'on', SVC_WEBHOOK_RETRY_DELAYS: '0,1', SVC_DATABASE_URL: url, SVC_REDIS_URL: redisUrl, SVC_REDIS_PREFIX: `svc-failover-${process.pid}:`, SVC_BOOTSTRAP_KEY: ADMIN, SVC_SECRET_KEY: '4f'.repeat(32), SVC_SIMULATOR: 'off' };
    const svc = await serveSvc(tmpDir(), env);
    procs.push(svc);
    // A second node of the same cluster: both must follow the promotion.
    const svc2 = await serveSvc(tmpDir(), env);
    procs.push(svc2);
    const nodes = [svc, svc2];
    expect(oneHost).toContain(String(primary.port));

    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    // A webhook endpoint: every confirmed event, before, during and after the failover, reaches it.
    const endpoint = await fetch(`${svc.base}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, tier: 'confirmed' }) });
    expect(endpoint.status, await endpoint.clone().text()).toBe(201);
    const games = await (await fetch(`${svc.base}/v1/games?date=today&sport=basketball`, { headers })).json();
    const game = games.data[1];
    const teams = game.competitors.map((c: { entity_id: string }) => c.entity_id.split(':').pop());
    const reporters = await keysOf(tmpDir(), url, 4, 'internal', ['report']);

    // A write that reaches the standby (read only) is a store fault, answered 503 store_unavailable, never a 500.
    const standby = await openDb({ dataDir: tmpDir(), databaseUrl: `postgres://postgres@127.0.0.1:${replica.port}/svc` });
    try {
      const refused: unknown = await new KeyRepo(standby, 'sandbox', keyPrefix('sandbox'))
        .create({ name: 'on the standby', plan: 'free', products: ['live'], sports: null, leagues: null }, new Date())
        .catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: '25006' });
      expect(storeFault(refused)).toBe('store_unavailable');
    } finally {
      await standby.close();
    }

    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    const lastAck = [0, 0];
    let stop = false;
    let n = 0;
    const loop = async (key: string, node: number) => {
      while (!stop) {
        // Six plays (two teams, one to three points), each confirmed once its reporters agree.
        const i = n++;
        const body = JSON.stringify({ game_id: game.id, team: teams[i % 2], points: (Math.floor(i / 2) % 3) + 1, ref: `r${i}` });
        const res = await fetch(`${nodes[node].base}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body }).catch(() => null);
        if (!res) continue;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const json = await res.json();
        if (res.status === 202) {
          acknowledged.push(...json.data.map((r: { id: string }) => r.id));
          lastAck[node] = Date.now();
        } else {
          expect(res.status, JSON.stringify(json)).toBe(503);
          expect(json.error.code).toBe('store_unavailable');
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    // Two clients on each node: the node that does not own the game routes its reports to the owner.
    const loops = reporters.map((k, i) => loop(k, i % 2));
    await new Promise((r) => setTimeout(r, 2_000));
    const before = acknowledged.length;
    expect(before).toBeGreaterThan(0);

    await primary.stop();
    const failedAt = Date.now();
    await replica.promote();
    const deadline = failedAt + 30_000;
    while (Math.min(...lastAck) < failedAt + 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const healedMs = Math.min(...lastAck) - failedAt;
    // A few more seconds of writes on the new primary.
    await new Promise((r) => setTimeout(r, 2_000));
    stop = true;
    await Promise.all(loops);
    console.log(`failover: both nodes writing on the new primary ${healedMs} ms after the old one stopped; answers ${JSON.stringify(Object.fromEntries(statuses))}; ${acknowledged.length} acknowledged`);
    expect(Math.min(...lastAck)).toBeGreaterThan(failedAt);
    expect(healedMs).toBeLessThan(30_000);
    expect([...statuses.keys()].sort()).toEqual(statuses.has(503) ? [202, 503] : [202]);

    // Every acknowledged report is on the new primary.
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${replica.port}/svc` });
    await client.connect();
    try {
      const stored = await client.query<{ n: number }>('select count(*)::int as n from reports where id = any($1)', [acknowledged]);
      expect(stored.rows[0].n).toBe(acknowledged.length);
      // And every confirmed event stored is delivered to the endpoint: no delivery lost either.
      // An event's id is `evt_` and its seq, zero-padded to 12 digits.
      const confirmed = (await client.query<{ seq: string }>(`select seq::text as seq from events where game_id = $1 and tier = 'confirmed'`, [game.id])).rows.map((r) => `evt_${r.seq.padStart(12, '0')}`);
      expect(confirmed.length).toBeGreaterThan(0);
      const delivered = () => new Set(receiver.requests.flatMap((r) => [...r.body.matchAll(/"id":"(evt_[0-9]+)"/g)].map((m) => m[1])));
      await receiver.waitFor(() => confirmed.every((id) => delivered().has(id)), 60_000, 'a delivery of every confirmed event');
      console.log(`failover: ${confirmed.length} confirmed events, each delivered`);
    } finally {
      await client.end();
    }
  });
});
