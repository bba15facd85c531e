import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { isoTime } from '../src/domain/clock.js';
import { migrate, type Db } from '../src/store/sql/db.js';
import { DeliveryQueue, SQLITE_DUE_WALK } from '../src/store/webhooks/deliveries.js';
import { engines, freshDb } from './helpers.js';

const T = Date.parse('2026-03-01T12:00:00.000Z');
const ENDPOINTS = ['we_claim_a', 'we_claim_b', 'we_claim_c', 'we_claim_d'];

/** A burst: `events` events at one instant, each with a pending delivery to every endpoint. */
async function burst(db: Db, events: number): Promise<void> {
  const at = isoTime(T);
  const rows = [];
  for (let seq = 1; seq <= events; seq++) {
    for (const endpoint of ENDPOINTS) {
      rows.push({
        id: `dlv_claim_${endpoint.slice(-1)}_${String(seq).padStart(4, '0')}`,
        endpoint_id: endpoint,
        event_id: `evt_claim_${seq}`,
        event_seq: seq,
        status: 'pending',
        attempts: 0,
        next_attempt_at: at,
        created_at: at,
      });
    }
  }
  await db.kysely.insertInto('webhook_deliveries').values(rows).execute();
}

async function dueIndexColumns(db: Db): Promise<string[]> {
  if (db.engine === 'sqlite') {
    const { rows } = await sql<{ name: string }>`select name from pragma_index_info('webhook_deliveries_due') order by seqno`.execute(db.kysely);
    return rows.map((r) => r.name);
  }
  const { rows } = await sql<{ name: string }>`
    select a.attname as name from pg_index i
    join pg_class c on c.oid = i.indexrelid
    join unnest(i.indkey) with ordinality as k(attnum, n) on true
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
    where c.relname = 'webhook_deliveries_due' order by k.n`.execute(db.kysely);
  return rows.map((r) => r.name);
}

describe.each(engines())('webhook claims (%s)', (engine) => {
  const open: Db[] = [];
  const db = async (): Promise<Db> => {
    const fresh = (await freshDb(engine)).db;
    open.push(fresh);
    return fresh;
  };
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close();
  });

  it('fill every free slot from a burst within the rows one claim looks at, oldest events first', async () => {
    const d = await db();
    await burst(d, 50);
    // a has one free slot of 4, b four, c none, d two: 7 in all, though the claim would take 8.
    const busy = new Map([
      ['we_claim_a', 3],
      ['we_claim_c', 4],
      ['we_claim_d', 2],
    ]);
    const claimed = await new DeliveryQueue(d).claim({ now: T + 1000, leaseMs: 30_000, limit: 8, cap: 4, busy, scan: 32 });
    const byEndpoint = (e: string) => claimed.filter((c) => c.endpoint_id === e).map((c) => c.event_seq).sort((x, y) => x - y);
    expect(byEndpoint('we_claim_a')).toEqual([1]);
    expect(byEndpoint('we_claim_b')).toEqual([1, 2, 3, 4]);
    expect(byEndpoint('we_claim_c')).toEqual([]);
    expect(byEndpoint('we_claim_d')).toEqual([1, 2]);
    for (const c of claimed) expect(c.attempts).toBe(1);

    // The claimed rows are leased: the next claim, with those slots taken, gets the next events.
    const busyAfter = new Map([...ENDPOINTS].map((e) => [e, e === 'we_claim_b' ? 2 : 4]));
    const next = await new DeliveryQueue(d).claim({ now: T + 2000, leaseMs: 30_000, limit: 8, cap: 4, busy: busyAfter, scan: 32 });
    expect(next.map((c) => [c.endpoint_id, c.event_seq]).sort()).toEqual([
      ['we_claim_b', 5],
      ['we_claim_b', 6],
    ]);
  });

  it('takes nothing that is not due yet, nor anything held by a lease', async () => {
    const d = await db();
    await burst(d, 3);
    const q = new DeliveryQueue(d);
    expect(await q.claim({ now: T - 1, leaseMs: 30_000, limit: 8, cap: 4, busy: new Map(), scan: 32 })).toEqual([]);
    expect(await q.claim({ now: T, leaseMs: 30_000, limit: 100, cap: 100, busy: new Map(), scan: 400 })).toHaveLength(12);
    expect(await q.claim({ now: T + 29_999, leaseMs: 30_000, limit: 100, cap: 100, busy: new Map(), scan: 400 })).toEqual([]);
    // The lease ran out: every row is due again, as its second attempt.
    const again = await q.claim({ now: T + 30_000, leaseMs: 30_000, limit: 100, cap: 100, busy: new Map(), scan: 400 });
    expect(again).toHaveLength(12);
    for (const c of again) expect(c.attempts).toBe(2);
  });

  it('orders the due index by time, then event, then endpoint, also on a database made before', async () => {
    const d = await db();
    expect(await dueIndexColumns(d)).toEqual(['next_attempt_at', 'event_seq', 'endpoint_id']);
    // The index as the first webhook migration made it, and this migration not run yet.
    await sql`drop index webhook_deliveries_due`.execute(d.kysely);
    await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at, endpoint_id) where status = 'pending'`.execute(d.kysely);
    await sql`delete from kysely_migration where name = '0008_webhook_due_by_event'`.execute(d.kysely);
    expect(await dueIndexColumns(d)).toEqual(['next_attempt_at', 'endpoint_id']);
    await migrate(d);
    expect(await dueIndexColumns(d)).toEqual(['next_attempt_at', 'event_seq', 'endpoint_id']);
  });
});

describe('SQLite webhook claims', () => {
  it('walk the due index alone, in its order: no table row read, no sort', async () => {
    const { db: d } = await freshDb('sqlite');
    try {
      const { rows } = await d.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${SQLITE_DUE_WALK}`, [isoTime(T), '[]', 32]));
      const plan = rows.map((r) => r.detail).join('\n');
      expect(plan).toMatch(/USING COVERING INDEX webhook_deliveries_due/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } finally {
      await d.close();
    }
  });
});
