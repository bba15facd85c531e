import { sql } from 'kysely';
import { isoTime } from '../domain/clock.js';
import { randomBase62 } from '../domain/keys.js';
import type { Db } from '../store/db.js';

/** A delivery claimed for one attempt; `attempts` already counts it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  attempts: number;
  claim_token: string;
}

export interface ClaimRequest {
  now: number;
  leaseMs: number;
  limit: number;
  /** Free slots of an endpoint in this process. */
  free: (endpointId: string) => number;
  /** Endpoints without a free slot: their due rows are skipped in SQL, so they cannot crowd the others out. */
  saturated: readonly string[];
  /** Due rows one claim looks at. */
  scan: number;
}

/**
 * The partial index only serves queries whose WHERE states its condition literally: a bound
 * parameter cannot be proven equal to 'pending' when SQLite prepares the statement.
 */
const PENDING = sql<boolean>`status = 'pending'`;

/**
 * Claims due deliveries under a lease. The claim moves next_attempt_at to the end of the lease
 * and counts the attempt, so a worker that dies mid-attempt releases its rows when the lease runs
 * out and the next claim is a new attempt number. On PostgreSQL the rows are locked with SKIP
 * LOCKED and the due condition is re-checked on the locked row version, so two workers never
 * claim the same attempt; SQLite runs the whole UPDATE under its write lock.
 */
export class DeliveryQueue {
  constructor(private readonly db: Db) {}

  async claim(req: ClaimRequest): Promise<ClaimedDelivery[]> {
    // Another worker may take the same candidates between our read and our update; its rows
    // then no longer qualify and the next read sees the ones behind them.
    for (let round = 0; round < 5; round++) {
      const ids = await this.candidates(req);
      if (ids.length === 0) return [];
      const claimed = await this.take(ids, req);
      if (claimed.length > 0) return claimed;
    }
    return [];
  }

  /** Oldest due first, within each endpoint's free slots. */
  private async candidates(req: ClaimRequest): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id'])
      .where(PENDING)
      .where('next_attempt_at', '<=', isoTime(req.now))
      .$if(req.saturated.length > 0, (q) => q.where('endpoint_id', 'not in', [...req.saturated]))
      .orderBy('next_attempt_at')
      .limit(req.scan)
      .execute();
    const taken = new Map<string, number>();
    const ids: string[] = [];
    for (const c of rows) {
      if (ids.length >= req.limit) break;
      const n = taken.get(c.endpoint_id) ?? 0;
      if (n >= req.free(c.endpoint_id)) continue;
      taken.set(c.endpoint_id, n + 1);
      ids.push(c.id);
    }
    return ids;
  }

  private async take(ids: string[], req: ClaimRequest): Promise<ClaimedDelivery[]> {
    const nowIso = isoTime(req.now);
    const token = randomBase62(16);
    const rows = await this.db.kysely
      .updateTable('webhook_deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: isoTime(req.now + req.leaseMs), last_attempt_at: nowIso, claim_token: token }))
      .$if(this.db.engine === 'postgres', (q) => {
        const locked = this.db.kysely
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('id', 'in', ids)
          .where(PENDING)
          .where('next_attempt_at', '<=', nowIso)
          .forUpdate()
          .skipLocked();
        // `= any(array(…))` runs the locking select once, then updates by primary key. As an
        // `in (subquery)` the planner may choose a semi-join that scans the table, which it does
        // while statistics lag a burst of new deliveries (measured: ~35 ms per claim of 32).
        return q.where(sql<boolean>`id = any(array(${locked}))`);
      })
      .where('id', 'in', ids)
      .where(PENDING)
      .where('next_attempt_at', '<=', nowIso)
      .returning(['id', 'endpoint_id', 'event_id', 'event_seq', 'attempts'])
      .execute();
    return rows.map((r) => ({ ...r, claim_token: token }));
  }
}

/** Deliveries waiting for an attempt, whoever holds them (the svc_webhook_pending gauge). */
export async function countPending(db: Db): Promise<number> {
  const row = await db.kysely
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(PENDING)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Attempts of every endpoint since `since` (epoch ms), and how many of them got no 2xx: the status page's webhooks channel. */
export async function attemptTally(db: Db, since: number): Promise<{ attempts: number; failures: number }> {
  const r = await db.kysely
    .selectFrom('webhook_attempts')
    .select((eb) => [
      eb.fn.countAll<number>().as('attempts'),
      eb.fn.sum<number>(sql<number>`case when status_code >= 200 and status_code < 300 then 0 else 1 end`).as('failures'),
    ])
    .where('at', '>=', new Date(since).toISOString())
    .executeTakeFirst();
  return { attempts: Number(r?.attempts ?? 0), failures: Number(r?.failures ?? 0) };
}
