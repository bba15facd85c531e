import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Db, Engine } from './db.js';
import { queryUnanswered } from './faults.js';
import { REFUSED_SQLSTATE } from '../migrations/0013-write-refusals.js';
import type { SqliteParam, CachedStatements } from './statement-cache.js';
import type { Database } from './database.js';

/** A row of a hot write's RETURNING or SELECT, keyed by column name; its owner decodes it. */
export type Row = Record<string, unknown>;

let hotStatements = 0;

/**
 * One statement of the hot write path, written once with `?` placeholders: the PostgreSQL text
 * (`$1`, `$2`, …) is derived at construction, so both engines run the same SQL. The text must
 * hold no `?` other than placeholders (no literals, no jsonb operators).
 */
export class HotSql {
  readonly postgres: string;
  /** Its name as a PostgreSQL prepared statement (PgRoundTrips), one per text of the process. */
  readonly name: string;

  /** How many `?` parameters it takes (the same on both engines). */
  readonly params: number;

  /** `postgresSource`: PostgreSQL's own text where the engines differ, with the same `?` parameters in the same order. */
  constructor(
    readonly sqlite: string,
    postgresSource = sqlite,
  ) {
    let n = 0;
    this.postgres = postgresSource.replace(/\?/g, () => `$${++n}`);
    this.params = sqlite.match(/\?/g)?.length ?? 0;
    if (n !== this.params) throw new Error(`the engines' texts take ${this.params} and ${n} parameters: ${sqlite}`);
    this.name = `svc_hot_${++hotStatements}`;
  }

  text(engine: Engine): string {
    return engine === 'postgres' ? this.postgres : this.sqlite;
  }
}

/** `C` itself when it names every column of `T` but `Except`, else never: a hot insert's column list cannot miss a column added later. */
export type EveryColumn<T, C extends readonly string[], Except extends keyof T = never> = [Exclude<keyof T, C[number] | Except>] extends [never] ? C : never;

/** Bound values one SQLite statement may take (its default limit is 32,766). */
const SQLITE_MAX_PARAMS = 32_000;

/** `?, ?, …` for `n` values. */
export const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * SQL the code wrote, standing where a parameter would (never text from a request): on PostgreSQL
 * a value only the database knows yet, such as the id of an event inserted earlier in the same
 * message (store/events/events.ts). It is written into the text as it is.
 */
export class SqlExpr {
  constructor(readonly text: string) {}
}

/** What a hot statement takes for a `?`. */
export type HotParam = SqliteParam | SqlExpr;

/**
 * A prepared statement's EXECUTE with its parameters written in as SQL literals, for
 * PostgreSQL's simple query protocol, the only one that carries several statements in one
 * message. Strings are quoted by pg's own `escapeLiteral` (libpq's rules), numbers written as pg
 * writes a number parameter.
 */
export function executeSql(q: HotSql, params: readonly HotParam[]): string {
  const expected = q.params;
  if (params.length < expected) throw new Error(`too few parameters for: ${q.sqlite}`);
  if (params.length > expected) throw new Error(`too many parameters for: ${q.sqlite}`);
  return params.length === 0 ? `execute ${q.name}` : `execute ${q.name}(${params.map(literal).join(', ')})`;
}

/** Text that escapeLiteral would only put between quotes. */
const PLAIN_TEXT = /^[^'\\]*$/;

function literal(v: HotParam): string {
  if (v === null) return 'NULL';
  if (v instanceof SqlExpr) return v.text;
  // Infinity, -Infinity and NaN as pg sends them as parameters: text a float column reads back as such.
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : `'${String(v)}'`;
  // PostgreSQL text cannot hold NUL, and in a simple query message it would end the text early.
  if (v.includes('\u0000')) throw new Error('a NUL character cannot be written to PostgreSQL');
  // Most values have neither a quote nor a backslash: quoted as they are, as escapeLiteral would.
  return PLAIN_TEXT.test(v) ? `'${v}'` : pg.escapeLiteral(v);
}

function plain(params: readonly HotParam[]): SqliteParam[] {
  return params.map((v) => {
    if (v instanceof SqlExpr) throw new Error('an SQL expression cannot be a SQLite parameter');
    return v;
  });
}

/**
 * A check inside a write transaction that refuses the write unless the stored state is what
 * the writer believed (the game's lease, a reporter's track record). On SQLite a read and a check
 * of its rows. On PostgreSQL an expression that fails by itself, through `svc_refuse(reason)`
 * (store/migrations/0013-write-refusals.ts): it travels with the rest of the write and the COMMIT, and the
 * database abandons the message, COMMIT included, at the refusal. Fences and locks held one after
 * another are one statement, `select` of their expressions in order.
 */
export interface Fence extends Refusal {
  /** An SQL expression with `?` placeholders, for PostgreSQL's `select` of the write's checks. */
  postgres: { expr: string; params: SqliteParam[] };
}

/**
 * What refuses a write on either engine: on SQLite a read and a check of its rows; on PostgreSQL
 * a statement of the write that raises `reason` through `svc_refuse` (a fence's `select`, or a
 * write of its own that checks the row it moves: `WriteTx.laterRefusing`).
 */
export interface Refusal {
  sqlite: { q: HotSql; params: SqliteParam[]; check: (rows: Row[]) => void };
  /** The message the PostgreSQL statement refuses with: the refusal it names. */
  reason: string;
  /** The error the write fails with when refused. */
  refused: () => Error;
}

/** The rows of a held statement, there once its round trip is done. */
export class HeldRows {
  private value: Row[] | null = null;

  /** @internal set by the round trip that carried the statement. */
  fill(rows: Row[]): void {
    this.value = rows;
  }

  /** Whether the rows are there (on SQLite at once). */
  get ready(): boolean {
    return this.value !== null;
  }

  get rows(): Row[] {
    if (this.value === null) throw new Error('the rows of a held statement were read before its round trip');
    return this.value;
  }
}

interface Held {
  /** A hot statement, or a bare command (begin, commit). */
  sql: HotSql | string;
  params?: readonly HotParam[];
  rows?: HeldRows;
  /** The refusals the statement may raise. */
  fences?: readonly Refusal[];
}

/** An expression of a write evaluated for its effect: a fence's refusal, a lock taken. */
interface Check {
  expr: string;
  params: readonly HotParam[];
  fence?: Fence;
}

/** The statements that consecutive checks become, by text: each prepared once per connection. */
const checkStatements = new Map<string, HotSql>();

/** The hot statements prepared on each pooled connection (a prepared statement lives as long as its session). */
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();

/** SQLSTATEs that say a connection's prepared statements are not what PgRoundTrips believes: the connection is dropped. */
const PREPARED_MISMATCH = new Set(['26000', '42P05']);

/**
 * The statements of one PostgreSQL transaction on one pooled client, sent as few round trips as
 * the data allows (docs/architecture.md "Hot writes"): a statement whose rows are not needed
 * right away waits, and goes with the next one that is needed, or with the COMMIT, as one
 * multi-statement message. PostgreSQL runs such a message's statements in order and abandons the
 * rest at the first error, so order and all-or-nothing are those of one statement at a time.
 */
class PgRoundTrips {
  private held: Held[] = [];
  /** Checks held since the last statement: they go as one, ahead of the next. */
  private checks: Check[] = [];
  /** The connection's prepared statements may differ from what is believed: it must not go back to the pool. */
  broken = false;
  /** A message went before the commit, so the transaction was opened with BEGIN and must end with COMMIT. */
  begun = false;

  constructor(readonly client: pg.PoolClient) {}

  hold(h: Held): void {
    this.closeChecks();
    this.held.push(h);
  }

  check(c: Check): void {
    this.checks.push(c);
  }

  /** The checks held so far, in order, as one `select` of their expressions. */
  private closeChecks(): void {
    if (this.checks.length === 0) return;
    const text = `select ${this.checks.map((c) => c.expr).join(', ')}`;
    let q = checkStatements.get(text);
    if (!q) {
      q = new HotSql(text);
      checkStatements.set(text, q);
    }
    this.held.push({ sql: q, params: this.checks.flatMap((c) => c.params), fences: this.checks.flatMap((c) => (c.fence ? [c.fence] : [])) });
    this.checks = [];
  }

  /** Sends what is held and `q`, returns `q`'s rows. */
  async run(q: HotSql, params: readonly HotParam[]): Promise<Row[]> {
    const rows = new HeldRows();
    this.hold({ sql: q, params, rows });
    await this.flush();
    return rows.rows;
  }

  /**
   * Sends what is held, if anything, as one message: first a PREPARE for each hot statement this
   * connection has not prepared yet (planning a statement cost more than running it: bench/history/2026-11-29.md
   * "The cluster's report path in one round trip"), then each statement's EXECUTE. The PREPAREs
   * lead, so by the time any statement of the message can fail they have run; PREPARE is not
   * undone by a rollback, so they are counted as prepared from then on.
   */
  async flush(): Promise<void> {
    this.closeChecks();
    // A flush opens the transaction even with nothing held: what follows it (built queries, a
    // lock taken with `select … for update`) must not run in autocommit.
    if (this.held.length === 0 && this.begun) return;
    if (!this.begun) {
      this.held.unshift({ sql: 'begin' });
      this.begun = true;
    }
    await this.send();
  }

  private async send(): Promise<void> {
    const batch = this.held;
    this.held = [];
    let prepared = preparedOn.get(this.client);
    if (!prepared) {
      prepared = new Set();
      preparedOn.set(this.client, prepared);
    }
    const prepares: string[] = [];
    const texts = batch.map((h) => {
      if (typeof h.sql === 'string') return h.sql;
      if (!prepared.has(h.sql.name)) {
        prepared.add(h.sql.name);
        prepares.push(`prepare ${h.sql.name} as ${h.sql.postgres}`);
      }
      return executeSql(h.sql, h.params ?? []);
    });
    let res: pg.QueryResult<Row> | pg.QueryResult<Row>[];
    try {
      res = await this.client.query<Row>([...prepares, ...texts].join(';\n'));
    } catch (err) {
      if (err instanceof pg.DatabaseError && err.code !== undefined && PREPARED_MISMATCH.has(err.code)) this.broken = true;
      // Not the database's answer (the connection failed, or the query outlasted its timeout and
      // may still run): the connection is not given back.
      if (!(err instanceof pg.DatabaseError)) this.broken = true;
      const fence = refusedFence(err, batch);
      throw fence ? fence.refused() : err;
    }
    const all = Array.isArray(res) ? res : [res];
    batch.forEach((h, i) => h.rows?.fill(all[prepares.length + i]?.rows ?? []));
  }

  /**
   * Ends the transaction. A transaction that is one message goes without BEGIN and COMMIT:
   * PostgreSQL runs a message of several statements as one transaction of its own, all or
   * nothing, committed once its last statement is done (two statements fewer a report).
   */
  async commit(): Promise<void> {
    this.closeChecks();
    if (this.begun) {
      this.hold({ sql: 'commit' });
      await this.send();
    } else if (this.held.length > 0) await this.send();
  }
}

function refusedFence(err: unknown, batch: readonly Held[]): Refusal | undefined {
  if (!(err instanceof pg.DatabaseError) || err.code !== REFUSED_SQLSTATE) return undefined;
  for (const h of batch) for (const f of h.fences ?? []) if (f.reason === err.message) return f;
  return undefined;
}

/**
 * A write transaction whose per-report statements skip the query builder (docs/architecture.md
 * "Hot writes"): `run` takes a fixed text and its parameters and returns its rows; `later`,
 * `hold` and `fence` take statements whose rows are not read at once. On SQLite each runs at once
 * as a cached prepared statement, synchronously, on the transaction's own connection; on
 * PostgreSQL they wait to travel with the next statement that needs its rows, or with the COMMIT
 * (PgRoundTrips). `builder()` is the same transaction for the statements off the hot path
 * (webhook deliveries, track records); what was held is sent first, so statements keep their
 * order and commit or roll back together.
 */
export class WriteTx {
  /** What runs once the transaction committed (`afterCommit`). */
  readonly committed: (() => void)[] = [];

  constructor(
    /** The same transaction as Kysely sees it (on SQLite, the connection it is open on). */
    private readonly kysely: Kysely<Database>,
    readonly engine: Engine,
    /** The SQLite connection Kysely holds for this transaction; null on PostgreSQL. */
    private readonly sqlite: CachedStatements | null,
    /** The PostgreSQL client of this transaction; null on SQLite. */
    private readonly pg: PgRoundTrips | null,
  ) {}

  async run(q: HotSql, params: HotParam[]): Promise<Row[]> {
    if (this.sqlite) return this.sqlite.rowsNow(q.sqlite, plain(params));
    if (this.pg) return this.pg.run(q, params);
    throw new Error('a write transaction without a connection');
  }

  /** A statement whose rows nobody reads; its failure fails the transaction all the same. */
  later(q: HotSql, params: HotParam[]): void {
    if (this.sqlite) this.sqlite.rowsNow(q.sqlite, plain(params));
    else this.pg?.hold({ sql: q, params });
  }

  /**
   * A statement whose rows nobody reads that refuses the write itself (`svc_refuse(refusal.reason)`
   * in its text) when the row it moves is not what the writer believed: the check rides on the
   * write, with no read of its own on PostgreSQL. On SQLite the refusal's read and check run first.
   */
  laterRefusing(q: HotSql, params: HotParam[], refusal: Refusal): void {
    if (this.sqlite) {
      refusal.sqlite.check(this.sqlite.rowsNow(refusal.sqlite.q.sqlite, refusal.sqlite.params));
      this.sqlite.rowsNow(q.sqlite, plain(params));
    } else this.pg?.hold({ sql: q, params, fences: [refusal] });
  }

  /** A statement whose rows are read after the next round trip (`flush`, `builder`, `run`) or the commit. */
  hold(q: HotSql, params: HotParam[]): HeldRows {
    const rows = new HeldRows();
    if (this.sqlite) rows.fill(this.sqlite.rowsNow(q.sqlite, plain(params)));
    else this.pg?.hold({ sql: q, params, rows });
    return rows;
  }

  /**
   * Rows inserted together that nobody reads back, whose values may name what the same write
   * inserted before them (`SqlExpr`): on SQLite run at once, a statement per chunk of rows; on
   * PostgreSQL one text with the values written in as literals, held like `later` (its length
   * follows the rows, so it is not prepared). `into` and `columns` are the code's own names.
   */
  laterRows(into: string, columns: readonly string[], rows: readonly (readonly HotParam[])[]): void {
    for (const r of rows) if (r.length !== columns.length) throw new Error(`a row of ${r.length} values for ${columns.length} columns of ${into}`);
    if (rows.length === 0) return;
    const head = `insert into ${into} (${columns.join(', ')}) values `;
    if (this.sqlite) {
      const per = Math.max(1, Math.floor(SQLITE_MAX_PARAMS / columns.length));
      for (let i = 0; i < rows.length; i += per) {
        const chunk = rows.slice(i, i + per);
        this.sqlite.rowsNow(head + chunk.map(() => `(${placeholders(columns.length)})`).join(', '), plain(chunk.flat()));
      }
    } else this.pg?.hold({ sql: head + rows.map((r) => `(${r.map(literal).join(', ')})`).join(', ') });
  }

  /** Runs `fn` once the transaction committed (never if it rolls back): wake-ups for what it wrote. */
  afterCommit(fn: () => void): void {
    this.committed.push(fn);
  }

  /** Refuses the transaction (`f.refused()`) unless the fence holds; nothing it refuses is ever committed. */
  fence(f: Fence): void {
    if (this.sqlite) f.sqlite.check(this.sqlite.rowsNow(f.sqlite.q.sqlite, f.sqlite.params));
    else this.pg?.check({ expr: f.postgres.expr, params: f.postgres.params, fence: f });
  }

  /**
   * A lock the transaction holds to its end, taken by `expr` (PostgreSQL; SQLite has one writer
   * and needs none). It travels with the fences held beside it, as one statement.
   */
  lock(expr: string, params: SqliteParam[] = []): void {
    this.pg?.check({ expr, params });
  }

  /** Sends what is held now: the held rows are there after it. */
  async flush(): Promise<void> {
    await this.pg?.flush();
  }

  /** The transaction for built queries, once what is held has been sent. */
  async builder(): Promise<Kysely<Database>> {
    await this.pg?.flush();
    return this.kysely;
  }
}

/** Kysely on one pooled client, for a transaction's built queries: the client goes back to the pool with the transaction, not with each query. */
const onClient = new WeakMap<pg.PoolClient, Kysely<Database>>();

function kyselyOn(client: pg.PoolClient): Kysely<Database> {
  let k = onClient.get(client);
  if (!k) {
    const held = { query: client.query.bind(client), release: () => undefined };
    k = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => held, end: async () => undefined } }) });
    onClient.set(client, k);
  }
  return k;
}

/**
 * Runs `fn` in one transaction of the service's connection. The raw SQLite statements of `run`
 * are only sound here: Kysely's SQLite driver has one connection, and `connection()` holds it,
 * behind the driver's mutex, until `fn` is done, so nothing else runs on it meanwhile and every
 * statement of `fn`, raw or built, is part of this transaction. On SQLite BEGIN and COMMIT are
 * raw statements too: Kysely's transaction() added two more queued queries to every report. On
 * PostgreSQL the transaction owns a pooled client: a transaction that is one message (a report's
 * write) is sent without BEGIN and COMMIT, PostgreSQL making the message its transaction; one of
 * several messages has BEGIN with its first and COMMIT with its last. What `afterCommit` was given
 * runs once the commit is done.
 */
export async function writeTransaction<T>(db: Db, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
  const opened: WriteTx[] = [];
  const out = await inTransaction(db, (tx) => {
    opened.push(tx);
    return fn(tx);
  });
  for (const tx of opened) for (const done of tx.committed) done();
  return out;
}

async function inTransaction<T>(db: Db, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
  const sqlite = db.engine === 'sqlite' ? db.statements : undefined;
  if (!sqlite) {
    if (!db.pgPool) return db.kysely.transaction().execute((trx) => fn(new WriteTx(trx, db.engine, null, null)));
    return pgTransaction(await db.pgPool.connect(), fn);
  }
  return db.kysely.connection().execute(async (conn) => {
    sqlite.rowsNow('begin', []);
    try {
      const out = await fn(new WriteTx(conn, 'sqlite', sqlite, null));
      sqlite.rowsNow('commit', []);
      return out;
    } catch (err) {
      // A failed COMMIT may already have ended the transaction (SQLite rolls back on some errors).
      if (sqlite.inTransaction) sqlite.rowsNow('rollback', []);
      throw err;
    }
  });
}

async function pgTransaction<T>(client: pg.PoolClient, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
  const trips = new PgRoundTrips(client);
  let out: T;
  try {
    out = await fn(new WriteTx(kyselyOn(client), 'postgres', null, trips));
    await trips.commit();
  } catch (err) {
    // A statement the server did not answer is still outstanding on the connection, and a
    // ROLLBACK would wait behind it for a second query timeout: the connection is closed instead,
    // which ends the transaction on the server (store/pg-guard.ts says more).
    if (queryUnanswered(err)) {
      client.release(err instanceof Error ? err : true);
      throw err;
    }
    // Nothing opened, or a message that was its own transaction and is over: nothing to roll back.
    if (!trips.begun) {
      client.release(trips.broken || undefined);
      throw err;
    }
    // A connection that cannot roll back, or whose prepared statements are in doubt, is not given
    // back to the pool: pg closes it.
    await client.query('rollback').then(
      () => client.release(trips.broken || undefined),
      (rollbackErr: unknown) => client.release(rollbackErr instanceof Error ? rollbackErr : true),
    );
    throw err;
  }
  client.release();
  return out;
}
