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
  /** Attempts one endpoint may have in flight in this process. */
  cap: number;
  /** Attempts in flight in this process, by endpoint (endpoints not listed have none). */
  busy: ReadonlyMap<string, number>;
  /** Due rows one claim looks at. */
  scan: number;
}

interface ClaimedRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  attempts: number;
}

/**
 * The partial index only serves queries whose WHERE states its condition literally: a bound
 * parameter cannot be proven equal to 'pending' when SQLite prepares the statement.
 */
const PENDING = sql<boolean>`status = 'pending'`;

/** The oldest due rows first, each endpoint within its free slots, up to `limit`. */
export function withinFreeSlots(due: readonly { id: string; endpoint_id: string }[], req: Pick<ClaimRequest, 'limit' | 'cap' | 'busy'>): string[] {
  const taken = new Map<string, number>();
  const ids: string[] = [];
  for (const d of due) {
    if (ids.length >= req.limit) break;
    const n = taken.get(d.endpoint_id) ?? req.busy.get(d.endpoint_id) ?? 0;
    if (n >= req.cap) continue;
    taken.set(d.endpoint_id, n + 1);
    ids.push(d.id);
  }
  return ids;
}

/**
 * Claims due deliveries under a lease. The claim moves next_attempt_at to the end of the lease
 * and counts the attempt, so a worker that dies mid-attempt releases its rows when the lease runs
 * out and the next claim is a new attempt number.
 *
 * A claim walks the due index in time order (`scan` rows at most, skipping endpoints at their
 * cap) and takes the oldest rows within each endpoint's free slots, up to `limit`. Lists travel
 * as one JSON or array parameter, so the SQL text never changes and its prepared statement is
 * reused. On PostgreSQL one statement walks, locks with SKIP LOCKED (which re-checks the due
 * condition on the locked row version: two workers never claim the same attempt), ranks and
 * updates. SQLite (one worker per file, `docs/webhooks.md`) reads, chooses here, and updates by
 * id with the due condition again, since a write through the API may come between the two.
 */
export class DeliveryQueue {
  constructor(private readonly db: Db) {}

  async claim(req: ClaimRequest): Promise<ClaimedDelivery[]> {
    const token = randomBase62(16);
    const rows = this.db.engine === 'postgres' ? await this.claimPostgres(req, token) : await this.claimSqlite(req, token);
    return rows.map((r) => ({ ...r, claim_token: token }));
  }

  /**
   * Two statements under SQLite: the due walk, the choice within free slots here, then the
   * update by id. One statement that ranks in SQL (a window over the walk, as on PostgreSQL)
   * measured slower here: 571 ms of SQLite time over bench/webhooks' 20,000 deliveries against 339.
   */
  private async claimSqlite(req: ClaimRequest, token: string): Promise<ClaimedRow[]> {
    const nowIso = isoTime(req.now);
    const saturated = JSON.stringify([...req.busy].filter(([, n]) => n >= req.cap).map(([id]) => id));
    const { rows: due } = await sql<{ id: string; endpoint_id: string }>`
      select id, endpoint_id from webhook_deliveries
      where ${PENDING} and next_attempt_at <= ${nowIso} and endpoint_id not in (select value from json_each(${saturated}))
      order by next_attempt_at limit ${req.scan}`.execute(this.db.kysely);
    const ids = withinFreeSlots(due, req);
    if (ids.length === 0) return [];
    const { rows } = await sql<ClaimedRow>`
      update webhook_deliveries
      set attempts = attempts + 1, next_attempt_at = ${isoTime(req.now + req.leaseMs)}, last_attempt_at = ${nowIso}, claim_token = ${token}
      where id in (select value from json_each(${JSON.stringify(ids)})) and ${PENDING} and next_attempt_at <= ${nowIso}
      returning id, endpoint_id, event_id, event_seq, attempts`.execute(this.db.kysely);
    return rows;
  }

  private async claimPostgres(req: ClaimRequest, token: string): Promise<ClaimedRow[]> {
    const nowIso = isoTime(req.now);
    const ids = [...req.busy.keys()];
    const counts = [...req.busy.values()];
    return this.db.kysely.transaction().execute(async (trx) => {
      // The walk must be an ordered scan of the due index that stops after `scan` rows. While
      // statistics lag a burst of new deliveries the planner expects a handful of due rows and
      // prefers a bitmap scan plus sort, which reads every due row: ~5 ms per claim at 16,000
      // due (bench/RESULTS.md "bench/webhooks"). This transaction rules that plan out.
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const { rows } = await sql<ClaimedRow>`
        update webhook_deliveries
        set attempts = attempts + 1, next_attempt_at = ${isoTime(req.now + req.leaseMs)}, last_attempt_at = ${nowIso}, claim_token = ${token}
        where id = any(array(
          select id from (
            select d.id, d.next_attempt_at,
              row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as n,
              coalesce(b.busy, 0) as busy
            from (
              select id, endpoint_id, next_attempt_at from webhook_deliveries
              where ${PENDING} and next_attempt_at <= ${nowIso}
                and endpoint_id <> all(array(select e from unnest(${ids}::text[], ${counts}::int[]) as s(e, n) where n >= ${req.cap}))
              order by next_attempt_at limit ${req.scan}
              for update skip locked
            ) d
            left join unnest(${ids}::text[], ${counts}::int[]) as b(endpoint_id, busy) on b.endpoint_id = d.endpoint_id
          ) r
          where n <= ${req.cap} - busy
          order by next_attempt_at, id limit ${req.limit}
        ))
        returning id, endpoint_id, event_id, event_seq, attempts`.execute(trx);
      return rows;
    });
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
