import { CompiledQuery, type Kysely } from 'kysely';
import type { Db, Engine } from './db.js';
import type { SqliteParam, CachedStatements } from './statement-cache.js';
import type { Database } from './types.js';

/** A row of a hot write's RETURNING or SELECT, keyed by column name; its owner decodes it. */
export type Row = Record<string, unknown>;

/**
 * One statement of the hot write path, written once with `?` placeholders: the PostgreSQL text
 * (`$1`, `$2`, …) is derived at construction, so both engines run the same SQL. The text must
 * hold no `?` other than placeholders (no literals, no jsonb operators).
 */
export class HotSql {
  readonly postgres: string;

  constructor(readonly sqlite: string) {
    let n = 0;
    this.postgres = sqlite.replace(/\?/g, () => `$${++n}`);
  }

  text(engine: Engine): string {
    return engine === 'postgres' ? this.postgres : this.sqlite;
  }
}

/** `C` itself when it names every column of `T` but `Except`, else never: a hot insert's column list cannot miss a column added later. */
export type EveryColumn<T, C extends readonly string[], Except extends keyof T = never> = [Exclude<keyof T, C[number] | Except>] extends [never] ? C : never;

/** `?, ?, …` for `n` values. */
export const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * A write transaction whose per-report statements skip the query builder (docs/architecture.md
 * "Hot writes"): `run` takes a fixed text and its parameters. On SQLite it runs a cached
 * prepared statement synchronously on the transaction's own connection; on PostgreSQL it goes
 * through the transaction's client like any Kysely query. `kysely` is the same transaction for
 * the statements off the hot path (webhook deliveries, track records), so both kinds commit or
 * roll back together.
 */
export class WriteTx {
  constructor(
    /** The same transaction as Kysely sees it (on SQLite, the connection it is open on). */
    readonly kysely: Kysely<Database>,
    readonly engine: Engine,
    /** The SQLite connection Kysely holds for this transaction; null on PostgreSQL. */
    private readonly sqlite: CachedStatements | null,
  ) {}

  async run(q: HotSql, params: SqliteParam[]): Promise<Row[]> {
    if (this.sqlite) return this.sqlite.rowsNow(q.sqlite, params);
    const res = await this.kysely.executeQuery<Row>(CompiledQuery.raw(q.postgres, params));
    return res.rows;
  }
}

/**
 * Runs `fn` in one transaction of the service's connection. The raw SQLite statements of `run`
 * are only sound here: Kysely's SQLite driver has one connection, and `connection()` holds it,
 * behind the driver's mutex, until `fn` is done, so nothing else runs on it meanwhile and every
 * statement of `fn`, raw or built, is part of this transaction. On SQLite BEGIN and COMMIT are
 * raw statements too: Kysely's transaction() added two more queued queries to every report.
 */
export function writeTransaction<T>(db: Db, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
  const sqlite = db.engine === 'sqlite' ? db.statements : undefined;
  if (!sqlite) return db.kysely.transaction().execute((trx) => fn(new WriteTx(trx, db.engine, null)));
  return db.kysely.connection().execute(async (conn) => {
    sqlite.rowsNow('begin', []);
    try {
      const out = await fn(new WriteTx(conn, 'sqlite', sqlite));
      sqlite.rowsNow('commit', []);
      return out;
    } catch (err) {
      // A failed COMMIT may already have ended the transaction (SQLite rolls back on some errors).
      if (sqlite.inTransaction) sqlite.rowsNow('rollback', []);
      throw err;
    }
  });
}
