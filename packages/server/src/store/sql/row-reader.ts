import SQLite from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { PrimaryPool } from './pg-primary.js';
import { StatementLru } from './statement-cache.js';

/** A value bound to a hot read's parameter; lists bind as one array parameter on PostgreSQL. */
export type SqlValue = string | number | readonly string[];

/**
 * The hot read paths' way to the database (docs/architecture.md "Hot reads"): a fixed SQL text
 * and its parameters in, rows as arrays out, with no query builder in between. A page of
 * `GET /v1/competitions` spent as long building and compiling its two queries in Kysely as in
 * SQLite itself; statements are prepared once per SQL text here instead, and rows stay arrays
 * (the readers decode and check them by position, like store/events/lines.ts).
 */
export interface RowReader {
  rows(query: SqlQuery): Promise<unknown[][]>;
  close(): Promise<void>;
}

export interface SqlQuery {
  text: string;
  params: SqlValue[];
}

/**
 * Builds one query's text and parameters for an engine. The text depends only on which clauses
 * are present (and, on SQLite, on the length of `in` lists), so a handful of texts cover every
 * request and each is prepared once.
 */
export class SqlBuilder {
  readonly params: SqlValue[] = [];

  constructor(private readonly engine: 'sqlite' | 'postgres') {}

  /** A placeholder for `value`. */
  bind(value: string | number): string {
    this.params.push(value);
    return this.engine === 'postgres' ? `$${this.params.length}` : '?';
  }

  /** `column` is one of `values`; no values match nothing. */
  oneOf(column: string, values: readonly string[]): string {
    if (values.length === 0) return '1 = 0';
    if (this.engine === 'postgres') {
      this.params.push(values);
      return `${column} = any($${this.params.length}::text[])`;
    }
    return `${column} in (${values.map((v) => this.bind(v)).join(', ')})`;
  }

  query(text: string): SqlQuery {
    return { text, params: this.params };
  }
}

/** A row that does not have the shape its query promises: a bug or a schema drift, never user input. */
export class RowShapeError extends Error {}

export const rowText = (v: unknown): string => {
  if (typeof v !== 'string') throw new RowShapeError(`expected text, got ${typeof v}`);
  return v;
};
export const rowNumber = (v: unknown): number => {
  if (typeof v !== 'number') throw new RowShapeError(`expected a number, got ${typeof v}`);
  return v;
};
export const rowTextOrNull = (v: unknown): string | null => (v === null ? null : rowText(v));

const STATEMENT_CACHE = 256;

/**
 * SQLite: a read-only connection of its own, so a read never waits behind (nor sees the
 * uncommitted rows of) a transaction the service's connection holds across awaits; WAL lets it
 * read the last committed state while writes go on. Statements are cached by text (LRU).
 */
export class SqliteRowReader implements RowReader {
  private db: SQLite.Database | null = null;
  private readonly statements = new StatementLru((sql) => (this.db ??= this.open()).prepare(sql).raw(true), STATEMENT_CACHE);

  /** `cacheKiB`: the connection's page cache (a bulk reader keeps it small). */
  constructor(
    private readonly file: string,
    private readonly cacheKiB = 32_768,
  ) {}

  async rows(q: SqlQuery): Promise<unknown[][]> {
    return this.rowsNow(q);
  }

  /** The same read, synchronously: better-sqlite3 reads block anyway, and a caller may save the promise. */
  rowsNow(q: SqlQuery): unknown[][] {
    const out: unknown[] = this.statements.get(q.text).all(...q.params.map(sqliteValue));
    return out.filter(isRow);
  }

  private open(): SQLite.Database {
    const db = new SQLite(this.file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.pragma(`cache_size = -${Math.floor(this.cacheKiB)}`);
    return db;
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.db?.close();
    this.db = null;
  }
}

function sqliteValue(v: SqlValue): string | number {
  if (typeof v === 'string' || typeof v === 'number') return v;
  throw new TypeError('a list parameter on SQLite: SqlBuilder.oneOf binds each value');
}

const isRow = (r: unknown): r is unknown[] => Array.isArray(r);

/**
 * PostgreSQL: the service's pool, each text a named prepared statement (parsed and planned once
 * per connection), rows as arrays.
 */
export class PgRowReader implements RowReader {
  private readonly names = new Map<string, string>();

  constructor(private readonly pool: PrimaryPool) {}

  async rows(q: SqlQuery): Promise<unknown[][]> {
    let name = this.names.get(q.text);
    // Texts differ only by which clauses are present, so there are few; past the cap, unnamed.
    // The name derives from the text: every reader on the pool (and every node) agrees on it,
    // and a connection never sees one name for two texts.
    if (name === undefined && this.names.size < STATEMENT_CACHE) {
      name = `svc_${createHash('sha256').update(q.text).digest('hex').slice(0, 24)}`;
      this.names.set(q.text, name);
    }
    const res = await this.pool.query({ ...(name === undefined ? {} : { name }), text: q.text, values: [...q.params], rowMode: 'array' });
    return res.rows.filter(isRow);
  }

  async close(): Promise<void> {
    // The pool belongs to the Db.
  }
}
