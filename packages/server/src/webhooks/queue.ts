import { sql } from 'kysely';
import { isoTime } from '../domain/clock.js';
import { randomBase62 } from '../domain/keys.js';
import type { Db } from '../store/db.js';
import { rowNumber, rowText } from '../store/row-reader.js';

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

/**
 * Chooses among due rows offered oldest first: each endpoint within its free slots, up to
 * `limit`. `offer` says whether more rows are wanted, so the walk stops as soon as it has enough.
 */
class FreeSlots {
  readonly rowids: number[] = [];
  private readonly taken = new Map<string, number>();

  constructor(private readonly req: Pick<ClaimRequest, 'limit' | 'cap' | 'busy'>) {}

  offer(rowid: number, endpointId: string): boolean {
    const n = this.taken.get(endpointId) ?? this.req.busy.get(endpointId) ?? 0;
    if (n < this.req.cap) {
      this.taken.set(endpointId, n + 1);
      this.rowids.push(rowid);
    }
    return this.rowids.length < this.req.limit;
  }
}

/**
 * SQLite's claim walks the due index alone (rowid and endpoint_id are in it: no table row is
 * read), in its order, and stops once the free slots are filled. The update finds its rows by
 * rowid and checks the due condition again: nothing else of this process runs on the connection
 * in between, and a write of another process in between can only leave a row out (svc never
 * vacuums a file it serves, so rowids stay).
 */
export const SQLITE_DUE_WALK = `
  select rowid, endpoint_id from webhook_deliveries
  where status = 'pending' and next_attempt_at <= ? and endpoint_id not in (select value from json_each(?))
  order by next_attempt_at, event_seq, endpoint_id limit ?`;
const SQLITE_CLAIM = `
  update webhook_deliveries
  set attempts = attempts + 1, next_attempt_at = ?, last_attempt_at = ?, claim_token = ?
  where rowid in (select value from json_each(?)) and status = 'pending' and next_attempt_at <= ?
  returning id, endpoint_id, event_id, event_seq, attempts`;

const claimedRow = (r: Record<string, unknown>): ClaimedRow => ({
  id: rowText(r.id),
  endpoint_id: rowText(r.endpoint_id),
  event_id: rowText(r.event_id),
  event_seq: rowNumber(r.event_seq),
  attempts: rowNumber(r.attempts),
});

/**
 * Claims due deliveries under a lease. The claim moves next_attempt_at to the end of the lease
 * and counts the attempt, so a worker that dies mid-attempt releases its rows when the lease runs
 * out and the next claim is a new attempt number.
 *
 * A claim walks the due index in time order, events in their order within a time (`scan` rows
 * at most, skipping endpoints at their cap), and takes the oldest rows within each endpoint's
 * free slots, up to `limit`. Lists travel as one JSON or array parameter, so the SQL text never
 * changes and its prepared statement is reused. On PostgreSQL one statement walks, locks with
 * SKIP LOCKED (which re-checks the due condition on the locked row version: two workers never
 * claim the same attempt), ranks and updates. SQLite (one worker per file, `docs/webhooks.md`)
 * reads, chooses here as it reads, and updates by rowid with the due condition again.
 */
export class DeliveryQueue {
  constructor(private readonly db: Db) {}

  async claim(req: ClaimRequest): Promise<ClaimedDelivery[]> {
    const token = randomBase62(16);
    const rows = this.db.engine === 'postgres' ? await this.claimPostgres(req, token) : await this.claimSqlite(req, token);
    return rows.map((r) => ({ ...r, claim_token: token }));
  }

  /**
   * Two statements under SQLite: the walk, choosing within free slots as it goes, then the
   * update by rowid. One statement that ranks in SQL (a window over the walk, as on PostgreSQL)
   * measured slower here, and reading the walk lazily from the index in event order cut the
   * walk's time again (bench/RESULTS.md "bench/webhooks", "Webhook claims from the index alone").
   */
  private async claimSqlite(req: ClaimRequest, token: string): Promise<ClaimedRow[]> {
    const statements = this.db.statements;
    if (!statements) throw new Error('webhook claim: the SQLite store has no statement cache');
    const nowIso = isoTime(req.now);
    const saturated = JSON.stringify([...req.busy].filter(([, n]) => n >= req.cap).map(([id]) => id));
    return this.db.kysely.connection().execute(async () => {
      const pick = new FreeSlots(req);
      statements.scanNow(SQLITE_DUE_WALK, [nowIso, saturated, req.scan], ([rowid, endpointId]) => pick.offer(rowNumber(rowid), rowText(endpointId)));
      if (pick.rowids.length === 0) return [];
      const rows = statements.rowsNow(SQLITE_CLAIM, [isoTime(req.now + req.leaseMs), nowIso, token, JSON.stringify(pick.rowids), nowIso]);
      return rows.map(claimedRow);
    });
  }

  private async claimPostgres(req: ClaimRequest, token: string): Promise<ClaimedRow[]> {
    const nowIso = isoTime(req.now);
    const ids = [...req.busy.keys()];
    const counts = [...req.busy.values()];
    return this.db.kysely.transaction().execute(async (trx) => {
      // The walk must be an ordered scan of the due index that stops after `scan` rows. While
      // statistics lag a burst of new deliveries the planner expects a handful of due rows and
      // prefers a bitmap scan plus sort, which reads every due row on every claim
      // (bench/RESULTS.md "bench/webhooks"). This transaction rules that plan out.
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const { rows } = await sql<ClaimedRow>`
        update webhook_deliveries
        set attempts = attempts + 1, next_attempt_at = ${isoTime(req.now + req.leaseMs)}, last_attempt_at = ${nowIso}, claim_token = ${token}
        where id = any(array(
          select id from (
            select d.id, d.next_attempt_at, d.event_seq,
              row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.event_seq, d.id) as n,
              coalesce(b.busy, 0) as busy
            from (
              select id, endpoint_id, next_attempt_at, event_seq from webhook_deliveries
              where ${PENDING} and next_attempt_at <= ${nowIso}
                and endpoint_id <> all(array(select e from unnest(${ids}::text[], ${counts}::int[]) as s(e, n) where n >= ${req.cap}))
              order by next_attempt_at, event_seq limit ${req.scan}
              for update skip locked
            ) d
            left join unnest(${ids}::text[], ${counts}::int[]) as b(endpoint_id, busy) on b.endpoint_id = d.endpoint_id
          ) r
          where n <= ${req.cap} - busy
          order by next_attempt_at, event_seq, id limit ${req.limit}
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
