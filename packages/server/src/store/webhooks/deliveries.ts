import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import { eventId, type DeliveryStatus, type WebhookAttempt, type WebhookDelivery } from '@svc/schema';
import { isoTime } from '../../domain/clock.js';
import { randomBase62 } from '../../domain/keys.js';
import type { Db, Engine } from '../sql/db.js';
import { confirmedScoreSeqs, type ReplayScope } from '../events/events.js';
import { newestFirst, pageOf, type Page, type PageRequest } from '../sql/page.js';
import { rowNumber, rowText } from '../sql/row-reader.js';
import type { Database } from '../sql/database.js';
import type { WebhookDeliveryTable } from './types.js';
import type { EventIdParam } from '../events/events.js';
import { HotSql, writeTransaction, type EveryColumn, type HeldRows, type SqlExpr, type WriteTx } from '../sql/write-tx.js';
import { attemptRecord, deliveryRecord } from './rows.js';

/**
 * All the SQL of `webhook_deliveries` and `webhook_attempts` is in this module: the outbox's rows,
 * the claim queue and its leases, attempt outcomes and their log, and the management API's reads.
 * A write that must commit with an endpoint's (its deletion, its disabling, a batch of outcomes
 * that changes its health) takes the caller's transaction.
 */

const SORTABLE = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Delivery ids lead with the time (fixed-width, in byte order) and end with 16 random base62
 * characters: a fan-out of one event to many endpoints appends to the end of the primary-key
 * index instead of touching random pages, which is most of what an insert costs.
 */
export function newDeliveryIds(n: number, nowMs: number): string[] {
  const head = deliveryIdHead(nowMs);
  const random = randomBase62(16 * n);
  return Array.from({ length: n }, (_, i) => `${head}${random.slice(16 * i, 16 * i + 16)}`);
}

/** `dlv_` and the time, fixed-width: what delivery ids made at `nowMs` start with. */
function deliveryIdHead(nowMs: number): string {
  let time = '';
  for (let v = Math.max(0, Math.floor(nowMs)); time.length < 8; v = Math.floor(v / 62)) time = SORTABLE[v % 62] + time;
  return `dlv_${time}`;
}

/** SQLite allows 32,766 bound values per statement; 14 columns × 500 rows stays far below. */
const INSERT_CHUNK = 500;

export type NewDelivery = Insertable<WebhookDeliveryTable>;

export function pendingDelivery(id: string, endpointId: string, seq: number, nowIso: string, replayOf: string | null = null): NewDelivery {
  return {
    id,
    endpoint_id: endpointId,
    event_id: eventId(seq),
    event_seq: seq,
    status: 'pending',
    attempts: 0,
    next_attempt_at: nowIso,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    claim_token: null,
    replay_of: replayOf,
    created_at: nowIso,
    delivered_at: null,
  };
}

const DELIVERY_COLUMNS = ['id', 'endpoint_id', 'event_id', 'event_seq', 'status', 'attempts', 'next_attempt_at', 'last_attempt_at', 'last_status_code', 'last_error', 'claim_token', 'replay_of', 'created_at', 'delivered_at'] as const;
const _everyDeliveryColumn: EveryColumn<WebhookDeliveryTable, typeof DELIVERY_COLUMNS> = DELIVERY_COLUMNS;

/** A confirmed event as the outbox routes it: named as its append names it, with what routing looks at. */
export interface RoutedEvent {
  seq: number | SqlExpr;
  id: EventIdParam;
  type: string;
  sport: string;
  league: string;
  /** The key that alone may see the event (a sandbox replay's), null for everyone. */
  ownerKeyId: string | null;
  /** Its `confidence.probability`: endpoints whose `min_probability` is above it do not take it (status events carry 1). */
  probability: number;
}

const ROUTED_INTO = `insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) `;
/**
 * One pending delivery per endpoint that takes the event (docs/webhooks.md "Delivery"): enabled,
 * of confirmed events, its key not revoked and holding `live`, the event's type and sport among the
 * endpoint's, its probability at least the endpoint's `min_probability`, its sport and league
 * among the key's, and a sandbox replay's event only for the replay's own key (docs/replays.md). The lists are JSON text, read by each engine's JSON
 * functions; ids lead with the time as newDeliveryIds' do, the rest random.
 */
const ROUTE = {
  sqlite: new HotSql(
    ROUTED_INTO +
      "select ? || lower(hex(randomblob(8))), e.id, ?, ?, 'pending', 0, ?, null, null, null, null, null, ?, null " +
      'from webhook_endpoints e join api_keys k on k.id = e.key_id ' +
      "where e.status = 'enabled' and e.tier = 'confirmed' and k.revoked_at is null " +
      "and exists (select 1 from json_each(k.products) where value = 'live') " +
      'and (cast(? as text) is null or e.key_id = ?) ' +
      'and (e.types is null or exists (select 1 from json_each(e.types) where value = ?)) ' +
      'and e.min_probability <= ? ' +
      'and (e.sports is null or exists (select 1 from json_each(e.sports) where value = ?)) ' +
      'and (k.sports is null or exists (select 1 from json_each(k.sports) where value = ?)) ' +
      'and (k.leagues is null or exists (select 1 from json_each(k.leagues) where value = ?)) ' +
      'order by e.id returning id',
  ),
  postgres: new HotSql(
    ROUTED_INTO +
      "select ?::text || substr(md5(random()::text || e.id), 1, 16), e.id, ?::text, ?::bigint, 'pending', 0, ?::text, null, null, null, null, null, ?::text, null " +
      'from webhook_endpoints e join api_keys k on k.id = e.key_id ' +
      "where e.status = 'enabled' and e.tier = 'confirmed' and k.revoked_at is null and k.products::jsonb @> '[\"live\"]' " +
      'and (?::text is null or e.key_id = ?::text) ' +
      'and (e.types is null or e.types::jsonb @> to_jsonb(?::text)) ' +
      'and e.min_probability <= ?::double precision ' +
      'and (e.sports is null or e.sports::jsonb @> to_jsonb(?::text)) ' +
      'and (k.sports is null or k.sports::jsonb @> to_jsonb(?::text)) ' +
      'and (k.leagues is null or k.leagues::jsonb @> to_jsonb(?::text)) ' +
      'order by e.id returning id',
  ),
};

/**
 * The outbox, in the events' own append: the event's pending deliveries chosen and written by
 * one statement, held with the append's other writes, so on PostgreSQL the whole report is still
 * one message (docs/architecture.md "Hot writes"). Their ids are there once it is sent.
 */
export function routeDeliveries(tx: WriteTx, e: RoutedEvent, nowMs: number): HeldRows {
  const now = isoTime(nowMs);
  return tx.hold(ROUTE[tx.engine], [deliveryIdHead(nowMs), e.id, e.seq, now, now, e.ownerKeyId, e.ownerKeyId, e.type, e.probability, e.sport, e.sport, e.league]);
}

/** Writes deliveries in the caller's transaction (a replay's). */
export async function insertDeliveries(db: Kysely<Database>, rows: NewDelivery[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db.insertInto('webhook_deliveries').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }
}

/** Parks an endpoint's pending deliveries as `disabled`, in the transaction that disables it. */
export async function parkPendingDeliveries(trx: Kysely<Database>, endpointId: string): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'disabled', next_attempt_at: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

/** Deletes an endpoint's deliveries and their attempt log, in the transaction that deletes it. */
export async function deleteEndpointDeliveries(trx: Kysely<Database>, endpointId: string): Promise<void> {
  await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', endpointId).execute();
  await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpointId).execute();
}

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

/**
 * The claim's walk must be an ordered scan of the due index that stops after `scan` rows. While
 * statistics lag a burst of new deliveries the planner expects a handful of due rows and prefers a
 * bitmap scan plus sort, which reads every due row on every claim (bench/history/2026-11-24.md
 * "bench/webhooks"): the claim's transaction rules that plan out. The claim is a prepared statement
 * of the connection; each run is planned for its own values, as an unnamed statement was.
 */
const CLAIM_PLAN = new HotSql("select set_config('enable_bitmapscan', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)");
const CLAIM_POSTGRES = new HotSql(`
  update webhook_deliveries
  set attempts = attempts + 1, next_attempt_at = ?, last_attempt_at = ?, claim_token = ?
  where id = any(array(
    select id from (
      select d.id, d.next_attempt_at, d.event_seq,
        row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.event_seq, d.id) as n,
        coalesce(b.busy, 0) as busy
      from (
        select id, endpoint_id, next_attempt_at, event_seq from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ?
          and endpoint_id <> all(array(select e from unnest(?::text[], ?::int[]) as s(e, n) where n >= ?))
        order by next_attempt_at, event_seq limit ?
        for update skip locked
      ) d
      left join unnest(?::text[], ?::int[]) as b(endpoint_id, busy) on b.endpoint_id = d.endpoint_id
    ) r
    where n <= ? - busy
    order by next_attempt_at, event_seq, id limit ?
  ))
  returning id, endpoint_id, event_id, event_seq, attempts`);

/** A list as a PostgreSQL array literal, one parameter of a hot statement (`?::text[]`, `?::int[]`). */
function pgArray(xs: readonly (string | number)[]): string {
  return `{${xs.map((x) => (typeof x === 'number' ? String(x) : `"${x.replace(/["\\]/g, (c) => `\\${c}`)}"`)).join(',')}}`;
}

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
   * walk's time again (bench/history/2026-11-24.md "bench/webhooks", "Webhook claims from the index alone").
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

  /**
   * One round trip: BEGIN, the planner settings, the claim and COMMIT travel as one message
   * (store/sql/write-tx.ts), where Kysely's transaction took four (bench/history/2026-12-07.md).
   */
  private async claimPostgres(req: ClaimRequest, token: string): Promise<ClaimedRow[]> {
    const nowIso = isoTime(req.now);
    const ids = pgArray([...req.busy.keys()]);
    const counts = pgArray([...req.busy.values()]);
    const claimed = await writeTransaction(this.db, async (tx) => {
      tx.later(CLAIM_PLAN, []);
      return tx.hold(CLAIM_POSTGRES, [isoTime(req.now + req.leaseMs), nowIso, token, nowIso, ids, counts, req.cap, req.scan, ids, counts, req.cap, req.limit]);
    });
    return claimed.rows.map(claimedRow);
  }

  /**
   * Makes a claimed row due again now, if this claim still holds it. The attempt stays counted:
   * its request may have reached the receiver (docs/webhooks.md, "Delivery").
   */
  async release(job: ClaimedDelivery, nowIso: string): Promise<void> {
    await this.db.kysely
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: nowIso, claim_token: null })
      .where('id', '=', job.id)
      .where('claim_token', '=', job.claim_token)
      .where('status', '=', 'pending')
      .execute();
  }
}

export type Verdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; nextAttemptAt: number }
  | { kind: 'failed' }
  | { kind: 'gone' }
  /** Not sent after all (endpoint disabled, owner revoked, event missing): the claim is undone. */
  | { kind: 'cancel'; status: 'disabled' | 'failed'; reason: string };

export interface AttemptOutcome {
  job: ClaimedDelivery;
  verdict: Verdict;
  /** Start of the attempt, epoch ms. */
  at: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

/**
 * One outcome as the outcome update reads it, positionally: [id, claim token, verdict kind,
 * cancel status, next attempt (ISO), status code, error]. A batch travels as one JSON parameter,
 * so the statement's text never changes and is prepared once (docs/architecture.md "Hot reads":
 * building a query per id cost as much as SQLite's own work).
 */
type OutcomeRow = [string, string, Verdict['kind'], string | null, string | null, number | null, string | null];

function outcomeRow(o: AttemptOutcome): OutcomeRow {
  const v = o.verdict;
  // A cancelled attempt keeps the row's last status code and records why it was not sent.
  if (v.kind === 'cancel') return [o.job.id, o.job.claim_token, v.kind, v.status, null, null, v.reason];
  return [o.job.id, o.job.claim_token, v.kind, null, v.kind === 'retry' ? isoTime(v.nextAttemptAt) : null, o.statusCode, o.error];
}

/** An attempt log row, positionally: the columns of webhook_attempts in INSERT_ATTEMPTS' order. */
export type AttemptLogRow = [string, number, string, string, number | null, number, string | null, string | null];

/** The attempt log row of an outcome whose attempt started at `at` (ISO). */
export const attemptLogRow = (o: AttemptOutcome, at: string): AttemptLogRow => [o.job.id, o.job.attempts, o.job.endpoint_id, at, o.statusCode, o.durationMs, o.error, o.excerpt];

/**
 * How a verdict changes its delivery row (docs/webhooks.md "Delivery", "Auto-disable"): 2xx →
 * delivered; 410 → the endpoint is disabled, so the row too; a retry is pending again at its next
 * attempt and a final failure is failed, unless the endpoint was disabled mid-attempt, which keeps
 * the row parked as disabled; a cancel undoes the claim's count. Only the claim that still holds
 * the row writes it (`claim_token`); the ids it wrote come back.
 */
const SET_OUTCOME = `
  status = case o.kind
    when 'cancel' then o.cancel_status
    when 'delivered' then 'delivered'
    when 'gone' then 'disabled'
    else case when webhook_deliveries.status = 'disabled' then 'disabled' when o.kind = 'retry' then 'pending' else 'failed' end
  end,
  attempts = case when o.kind = 'cancel' then webhook_deliveries.attempts - 1 else webhook_deliveries.attempts end,
  next_attempt_at = case when o.kind = 'retry' and webhook_deliveries.status <> 'disabled' then o.next_at end,
  last_status_code = case when o.kind = 'cancel' then webhook_deliveries.last_status_code else o.status_code end,
  last_error = o.error,
  delivered_at = case when o.kind = 'delivered' then o.now else webhook_deliveries.delivered_at end,
  claim_token = null`;

const UPDATE_OUTCOMES = {
  sqlite: `
    update webhook_deliveries set ${SET_OUTCOME}
    from (
      select value ->> 0 as id, value ->> 1 as token, value ->> 2 as kind, value ->> 3 as cancel_status,
        value ->> 4 as next_at, value ->> 5 as status_code, value ->> 6 as error, ? as now
      from json_each(?)
    ) as o
    where webhook_deliveries.id = o.id and webhook_deliveries.claim_token = o.token
    returning webhook_deliveries.id`,
  postgres: `
    update webhook_deliveries set ${SET_OUTCOME}
    from (
      select e ->> 0 as id, e ->> 1 as token, e ->> 2 as kind, e ->> 3 as cancel_status,
        e ->> 4 as next_at, (e ->> 5)::int as status_code, e ->> 6 as error, $1::text as now
      from jsonb_array_elements($2::jsonb) as e
    ) as o
    where webhook_deliveries.id = o.id and webhook_deliveries.claim_token = o.token
    returning webhook_deliveries.id`,
};

const INSERT_ATTEMPTS = {
  sqlite: `
    insert into webhook_attempts (delivery_id, attempt, endpoint_id, at, status_code, duration_ms, error, response_excerpt)
    select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7
    from json_each(?)`,
  postgres: `
    insert into webhook_attempts (delivery_id, attempt, endpoint_id, at, status_code, duration_ms, error, response_excerpt)
    select e ->> 0, (e ->> 1)::int, e ->> 2, e ->> 3, (e ->> 4)::int, (e ->> 5)::int, e ->> 6, e ->> 7
    from jsonb_array_elements($1::jsonb) as e`,
};

/** A batch of outcomes as the outcome update's one parameter. */
export const outcomeRows = (outcomes: readonly AttemptOutcome[]): string => JSON.stringify(outcomes.map(outcomeRow));

/** Writes a batch's delivery rows in the caller's transaction; answers the ids its claims still held, the only rows written. */
export async function writeDeliveryOutcomes(trx: Kysely<Database>, engine: Engine, nowIso: string, rows: string): Promise<Set<string>> {
  const updated = await trx.executeQuery<{ id: string }>(CompiledQuery.raw(UPDATE_OUTCOMES[engine], [nowIso, rows]));
  return new Set(updated.rows.map((r) => r.id));
}

/** Appends to the attempt log in the caller's transaction. */
export async function insertAttempts(trx: Kysely<Database>, engine: Engine, attempts: readonly AttemptLogRow[]): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(INSERT_ATTEMPTS[engine], [JSON.stringify(attempts)]));
}

/** An endpoint's deliveries and their attempt log as the management API reads them, and the deliveries a replay adds. */
export class WebhookDeliveryStore {
  constructor(private readonly db: Db) {}

  async list(endpointId: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<Page<WebhookDelivery>> {
    const rows = await newestFirst(
      this.db.kysely
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .$if(status !== undefined, (q) => q.where('status', '=', status ?? 'pending')),
      page,
    ).execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], deliveryRecord);
  }

  async get(endpointId: string, id: string): Promise<{ delivery: WebhookDelivery; seq: number; attempts: WebhookAttempt[] } | undefined> {
    const row = await this.db.kysely.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('endpoint_id', '=', endpointId).executeTakeFirst();
    if (!row) return undefined;
    const attempts = await this.db.kysely.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute();
    return { delivery: deliveryRecord(row), seq: row.event_seq, attempts: attempts.map(attemptRecord) };
  }

  /** Confirmed score events with ts in [from, to) that the filter admits, by sequence; at most `max` + 1 (read from the event log). */
  replayableEvents(filter: ReplayScope, fromIso: string, toIso: string, max: number): Promise<number[]> {
    return confirmedScoreSeqs(this.db, filter, fromIso, toIso, max);
  }

  async add(rows: NewDelivery[]): Promise<void> {
    await this.db.kysely.transaction().execute((trx) => insertDeliveries(trx, rows));
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
