import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** What a hot write binds on SQLite (store/sql/write-tx.ts). */
export type SqliteParam = string | number | null;

/** Prepared statements by SQL text, least recently used dropped past `capacity`. */
export class StatementLru {
  private readonly statements = new Map<string, SQLite.Statement>();

  constructor(
    private readonly prepare: (sql: string) => SQLite.Statement,
    private readonly capacity = 256,
  ) {}

  get(sql: string): SQLite.Statement {
    const cached = this.statements.get(sql);
    if (cached) {
      // Most recently used last: Map iteration order is insertion order.
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    const stmt = this.prepare(sql);
    this.statements.set(sql, stmt);
    if (this.statements.size > this.capacity) {
      const oldest = this.statements.keys().next();
      if (!oldest.done) this.statements.delete(oldest.value);
    }
    return stmt;
  }

  get size(): number {
    return this.statements.size;
  }

  clear(): void {
    this.statements.clear();
  }
}

/**
 * The SQLite handle Kysely is given: prepared statements are kept and reused by their SQL text.
 * Kysely's SQLite driver calls prepare() for every query it runs, and compiling the statement
 * was the largest single cost of a report's append (profile of bench/stream's 1-subscriber
 * latency: ~0.18 ms of ~1 ms of CPU per report). Kysely builds the same SQL text for the same
 * query shape, so a small LRU catches every hot query. Statements are safe to share here because
 * Kysely runs one query at a time on its single SQLite connection; SQLite re-prepares a cached
 * statement by itself after a schema change.
 */
export class CachedStatements implements SqliteDatabase {
  private readonly statements: StatementLru;
  /** scanNow's statements: a few fixed texts, never evicted. */
  private readonly scans = new Map<string, SQLite.Statement>();

  constructor(
    private readonly db: SQLite.Database,
    capacity = 256,
  ) {
    this.statements = new StatementLru((sql) => db.prepare(sql), capacity);
  }

  prepare(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  /**
   * Runs `sql` now on this connection, rows keyed by column (none for a statement without
   * RETURNING). Only for store/sql/write-tx.ts, inside a transaction Kysely holds the connection for.
   */
  rowsNow(sql: string, params: readonly SqliteParam[]): Record<string, unknown>[] {
    const stmt = this.statements.get(sql);
    if (!stmt.reader) {
      stmt.run(...params);
      return [];
    }
    return stmt.all(...params).filter(isRecord);
  }

  /**
   * Reads the rows of `sql` as arrays, in order, handing each to `visit` until it returns false;
   * the rows after that are never read. Same rule as rowsNow: only while Kysely holds the
   * connection (store/sql/write-tx.ts), and the iteration ends before this returns, so the
   * connection is free again for the next statement.
   */
  scanNow(sql: string, params: readonly SqliteParam[], visit: (row: unknown[]) => boolean): void {
    let stmt = this.scans.get(sql);
    if (!stmt) {
      // A statement of its own: raw mode is a setting of the statement, and rowsNow's keep objects.
      stmt = this.db.prepare(sql).raw(true);
      this.scans.set(sql, stmt);
    }
    for (const row of stmt.iterate(...params)) {
      if (!Array.isArray(row) || !visit(row)) break;
    }
  }

  /** Whether a transaction is open on this connection. */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  get size(): number {
    return this.statements.size;
  }

  close(): void {
    this.statements.clear();
    this.scans.clear();
    this.db.close();
  }
}

const isRecord = (r: unknown): r is Record<string, unknown> => typeof r === 'object' && r !== null;

