import { sql, type Kysely } from 'kysely';
import type { ChangeType } from '@svc/schema';
import type { Db, Engine } from '../sql/db.js';
import type { Database } from '../sql/database.js';
import { HotSql, type SqlExpr, type WriteTx } from '../sql/write-tx.js';

/**
 * The change feed's log (docs/changes.md): one row per created or updated competition and per
 * appended event, numbered by the database. All the SQL of `changes` and `changes_pruned` is here.
 *
 * One order on every node: each writer of a change row holds the event log's advisory lock
 * (PostgreSQL) from before its first change row until its commit, so rows commit in `seq` order
 * and a reader that saw `seq` N never later finds a row below N appear. SQLite has one writer.
 */
export const CHANGE_ORDER_LOCK = 7301;
const ORDER_LOCK = `pg_advisory_xact_lock(${CHANGE_ORDER_LOCK})`;

/** Takes the change order's lock (PostgreSQL) inside a Kysely transaction. */
export async function lockChangeOrder(k: Kysely<Database>, engine: Engine): Promise<void> {
  if (engine === 'postgres') await sql`select pg_advisory_xact_lock(${sql.lit(CHANGE_ORDER_LOCK)})`.execute(k);
}

/** Takes the change order's lock (PostgreSQL) inside a hot write transaction. */
export function lockChangeOrderTx(tx: WriteTx): void {
  tx.lock(ORDER_LOCK);
}

export interface NewChange {
  type: ChangeType;
  object_id: string;
  sport: string;
  league: string;
  owner_key_id: string | null;
  at: string;
}

const INSERT_CHANGE = new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, ?)');

/** A change written by the event log's append: the event's id may be the database's until the commit (store/events/events.ts). */
export type HotChange = Omit<NewChange, 'object_id'> & { object_id: string | SqlExpr };

/** In a hot write transaction that holds the order lock (the event log's append): one row per change. */
export function insertChangesTx(tx: WriteTx, rows: readonly HotChange[]): void {
  for (const r of rows) tx.later(INSERT_CHANGE, [r.type, r.object_id, r.sport, r.league, r.owner_key_id, r.at]);
}

/**
 * An update of another table (`update … returning …`, its `?` parameters first) and, only when it
 * moved a row, the change row it causes, as one PostgreSQL statement: the write needs no round
 * trip to learn whether to write the change. Its rows are there (one) when the update moved one.
 * In a hot write that holds the order lock; PostgreSQL only (SQLite cannot update in a `with`).
 */
export function changeIfMoved(update: string): string {
  return `with moved as (${update}) insert into changes (type, object_id, sport, league, owner_key_id, at) select ?, ?, ?, ?, ?, ? where exists (select 1 from moved) returning 1 as moved`;
}

/**
 * A `with` clause named `name` that writes the change row of the row an earlier clause `from`
 * inserted, its object id `objectId` (SQL over that clause's columns): the change travels in the
 * same statement as what it records. Its `?` parameters: type, sport, league, owner_key_id, at
 * (`changeClauseParams`). PostgreSQL only, in a hot write that holds the order lock.
 */
export function changeClause(name: string, from: string, objectId: string): string {
  return `${name} as (insert into changes (type, object_id, sport, league, owner_key_id, at) select ?, ${objectId}, ?, ?, ?, ? from ${from})`;
}

export const changeClauseParams = (r: Omit<NewChange, 'object_id'>): (string | null)[] => [r.type, r.sport, r.league, r.owner_key_id, r.at];

/** The values of `changeIfMoved`'s change row, after the update's. */
export const changeParams = (r: NewChange): (string | null)[] => [r.type, r.object_id, r.sport, r.league, r.owner_key_id, r.at];

/** In a Kysely transaction: takes the order lock, then writes the rows. */
export async function insertChanges(k: Kysely<Database>, engine: Engine, rows: readonly NewChange[]): Promise<void> {
  if (rows.length === 0) return;
  await lockChangeOrder(k, engine);
  await k.insertInto('changes').values([...rows]).execute();
}

export interface ChangeRow {
  seq: number;
  type: string;
  object_id: string;
  at: string;
}

export interface ChangeScope {
  sports: readonly string[] | null;
  leagues: readonly string[] | null;
  /** Only changes of real games and of this key's own sandbox replays (docs/replays.md). */
  viewerKeyId: string;
  types: readonly string[] | null;
}

export class ChangeLog {
  constructor(private readonly db: Db) {}

  /** Changes after `seq` that the scope admits, in order; at most `limit`. */
  async after(seq: number, limit: number, scope: ChangeScope): Promise<ChangeRow[]> {
    const rows = await this.db.kysely
      .selectFrom('changes')
      .select(['seq', 'type', 'object_id', 'at'])
      .where('seq', '>', seq)
      .$if(scope.sports !== null, (q) => q.where('sport', 'in', scope.sports?.length ? [...scope.sports] : ['']))
      .$if(scope.leagues !== null, (q) => q.where('league', 'in', scope.leagues?.length ? [...scope.leagues] : ['']))
      .$if(scope.types !== null, (q) => q.where('type', 'in', scope.types?.length ? [...scope.types] : ['']))
      .where((eb) => eb.or([eb('owner_key_id', 'is', null), eb('owner_key_id', '=', scope.viewerKeyId)]))
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), type: r.type, object_id: r.object_id, at: r.at }));
  }

  /** The highest change seq (0 when none) and the highest event seq, read in one statement: one snapshot of both. */
  async heads(): Promise<{ change: number; event: number }> {
    const r = await sql<{ c: number | string | null; e: number | string | null }>`select (select max(seq) from changes) as c, (select max(seq) from events) as e`.execute(this.db.kysely);
    const row = r.rows[0];
    return { change: Number(row?.c ?? 0), event: Number(row?.e ?? 0) };
  }

  /** The change row of an event (its `event.created`), undefined when it was pruned or never written. */
  async ofEvent(eventId: string): Promise<number | undefined> {
    const r = await this.db.kysely.selectFrom('changes').select('seq').where('object_id', '=', eventId).where('type', '=', 'event.created').executeTakeFirst();
    return r ? Number(r.seq) : undefined;
  }

  /** Every change up to this seq is deleted: a cursor before it is expired (0 when nothing was pruned). */
  async prunedThrough(): Promise<number> {
    const r = await this.db.kysely.selectFrom('changes_pruned').select('through_seq').where('id', '=', 1).executeTakeFirst();
    return Number(r?.through_seq ?? 0);
  }

  /**
   * Deletes the changes made before `beforeIso` (the retention) and records the highest seq
   * deleted. Returns how many went.
   */
  async prune(beforeIso: string): Promise<number> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const last = await trx.selectFrom('changes').select((eb) => eb.fn.max('seq').as('seq')).where('at', '<', beforeIso).executeTakeFirst();
      const through = Number(last?.seq ?? 0);
      if (through === 0) return 0;
      const res = await trx.deleteFrom('changes').where('seq', '<=', through).executeTakeFirst();
      const kept = await trx.selectFrom('changes_pruned').select('through_seq').where('id', '=', 1).executeTakeFirst();
      if (!kept) await trx.insertInto('changes_pruned').values({ id: 1, through_seq: through }).execute();
      else if (Number(kept.through_seq) < through) await trx.updateTable('changes_pruned').set({ through_seq: through }).where('id', '=', 1).execute();
      return Number(res.numDeletedRows);
    });
  }
}
