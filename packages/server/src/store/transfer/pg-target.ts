import pg from 'pg';
import { PgPrimary, PG_CONNECT_TIMEOUT_MS } from '../sql/pg-primary.js';
import { parsePgUrl } from '../sql/pg-targets.js';
import { canonicalLineOfCopied, kindOfPgType, RowChecksum, type ColumnKind } from './copy-text.js';
import { copyIn, copyOutLines } from './pg-copy-stream.js';
import { DEFERRED_INDEXES, PROGRESS_TABLE, SCHEMA_TABLES } from './tables.js';

/** A column of the target: its PostgreSQL type and how its values are written and compared (null: a type not handled). */
export interface TargetColumn {
  name: string;
  type: string;
  kind: ColumnKind | null;
}

export interface TargetTable {
  name: string;
  columns: TargetColumn[];
  /** The order both sides are read in for the checksum: the primary key's columns, or every column when there is none. */
  order: string[];
}

/** One table's line of an unfinished migration, as the target keeps it. */
export interface TableProgress {
  table: string;
  /** The source table's rows and largest rowid when the migration began: a resume refuses a source that changed. */
  sourceRows: number;
  sourceMaxRowid: number;
  /** Every source row up to this rowid is on the target, in the same transaction as this line. */
  afterRowid: number;
  copied: number;
  done: boolean;
}

/** A column fed by a sequence (bigserial or identity), and that sequence. */
export interface SerialColumn {
  table: string;
  column: string;
  sequence: string;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Rows between two reports of a checksum's progress. */
const PROGRESS_ROWS = 1000;

/** The connection failed or the server refused: one line, never the password. */
export class TargetError extends Error {}

/**
 * The PostgreSQL database `svc migrate-store` fills: one connection of its own (a COPY and the
 * progress line that goes with it share a transaction). SQL on the target lives here.
 */
export class PgTarget {
  private constructor(private readonly client: pg.Client) {}

  /** Connects to the primary of `url` (several hosts are allowed, as for SVC_DATABASE_URL). */
  static async connect(url: string): Promise<PgTarget> {
    const targets = parsePgUrl(url);
    const primary = await PgPrimary.find(targets);
    const at = primary.host;
    primary.close();
    const client = new pg.Client({ ...targets.client, host: at.host, port: at.port, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
    // A connection lost later fails the statement in flight; this keeps it from being an uncaught event too.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new TargetError(`cannot connect to the target ${at.host}:${at.port}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return new PgTarget(client);
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  /** The tables of the current schema, the migrator's and the progress table left out, columns in order. */
  async tables(): Promise<TargetTable[]> {
    const { rows } = await this.client.query<{ table_name: string; column_name: string; data_type: string }>(
      `select c.table_name, c.column_name, c.data_type
         from information_schema.columns c
         join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
        order by c.table_name, c.ordinal_position`,
    );
    const out = new Map<string, TargetTable>();
    for (const r of rows) {
      if (SCHEMA_TABLES.includes(r.table_name) || r.table_name === PROGRESS_TABLE || r.table_name === DEFERRED_INDEXES) continue;
      let t = out.get(r.table_name);
      if (!t) out.set(r.table_name, (t = { name: r.table_name, columns: [], order: [] }));
      t.columns.push({ name: r.column_name, type: r.data_type, kind: kindOfPgType(r.data_type) });
    }
    const keys = await this.client.query<{ table_name: string; column_name: string }>(
      `select k.table_name, k.column_name
         from information_schema.table_constraints c
         join information_schema.key_column_usage k on k.constraint_schema = c.constraint_schema and k.constraint_name = c.constraint_name and k.table_name = c.table_name
        where c.table_schema = current_schema() and c.constraint_type = 'PRIMARY KEY'
        order by k.table_name, k.ordinal_position`,
    );
    for (const k of keys.rows) out.get(k.table_name)?.order.push(k.column_name);
    for (const t of out.values()) if (t.order.length === 0) t.order = t.columns.map((c) => c.name);
    return [...out.values()];
  }

  /** The migrations the target has run, or null when it has no migration table yet. */
  async migrationsRun(): Promise<string[] | null> {
    const { rows } = await this.client.query<{ present: boolean }>(`select to_regclass('kysely_migration') is not null as present`);
    if (!rows[0]?.present) return null;
    const names = await this.client.query<{ name: string }>('select name from kysely_migration order by name');
    return names.rows.map((r) => r.name);
  }

  /** The first of `tables` that holds a row, or null when all are empty. */
  async firstWithRows(tables: readonly string[]): Promise<string | null> {
    for (const t of tables) {
      const { rows } = await this.client.query<{ any: boolean }>(`select exists (select 1 from ${quote(t)}) as any`);
      if (rows[0]?.any) return t;
    }
    return null;
  }

  async hasProgress(): Promise<boolean> {
    const { rows } = await this.client.query<{ present: boolean }>(`select to_regclass($1) is not null as present`, [PROGRESS_TABLE]);
    return rows[0]?.present === true;
  }

  /**
   * Records the start of a migration: a line per table, nothing copied yet. The tables' indexes,
   * primary keys and unique constraints are set aside (the statements that make them again kept
   * on the target) and made once every row is in, as pg_restore does: PostgreSQL builds an index
   * over loaded rows far faster than it maintains it row by row. A row copied twice would then
   * fail its key when the key is made again (and the verification).
   */
  async startProgress(tables: readonly Omit<TableProgress, 'afterRowid' | 'copied' | 'done'>[]): Promise<void> {
    await this.client.query('begin');
    try {
      await this.client.query(
        `create table ${PROGRESS_TABLE} (table_name text primary key, source_rows bigint not null, source_max_rowid bigint not null,
           after_rowid bigint not null, copied bigint not null, done boolean not null)`,
      );
      // Built in `step` order: keys first (a later index may lean on nothing, but keys are what a failure should name).
      await this.client.query(`create table ${DEFERRED_INDEXES} (name text primary key, step integer not null, definition text not null)`);
      for (const t of tables) {
        await this.client.query(`insert into ${PROGRESS_TABLE} values ($1, $2, $3, 0, 0, false)`, [t.table, t.sourceRows, t.sourceMaxRowid]);
      }
      const { rows } = await this.client.query<{ indexname: string; indexdef: string }>(
        `select i.indexname, i.indexdef from pg_indexes i
          where i.schemaname = current_schema() and i.tablename = any($1::text[])
            and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.connamespace = (select oid from pg_namespace where nspname = current_schema()))
          order by i.indexname`,
        [tables.map((t) => t.table)],
      );
      for (const r of rows) {
        await this.client.query(`insert into ${DEFERRED_INDEXES} values ($1, 2, $2)`, [r.indexname, r.indexdef]);
        await this.client.query(`drop index ${quote(r.indexname)}`);
      }
      const keys = await this.client.query<{ conname: string; relname: string; def: string }>(
        `select c.conname, t.relname, pg_get_constraintdef(c.oid) as def from pg_constraint c join pg_class t on t.oid = c.conrelid
          where c.contype in ('p', 'u') and t.relnamespace = (select oid from pg_namespace where nspname = current_schema()) and t.relname = any($1::text[])
          order by c.conname`,
        [tables.map((t) => t.table)],
      );
      for (const k of keys.rows) {
        await this.client.query(`insert into ${DEFERRED_INDEXES} values ($1, 1, $2)`, [k.conname, `alter table ${quote(k.relname)} add constraint ${quote(k.conname)} ${k.def}`]);
        await this.client.query(`alter table ${quote(k.relname)} drop constraint ${quote(k.conname)}`);
      }
      await this.client.query('commit');
    } catch (err) {
      await this.client.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  async progress(): Promise<TableProgress[]> {
    // bigint columns as text: whatever type parser the process has set for int8.
    const { rows } = await this.client.query<{ table_name: string; source_rows: string; source_max_rowid: string; after_rowid: string; copied: string; done: boolean }>(
      `select table_name, source_rows::text, source_max_rowid::text, after_rowid::text, copied::text, done from ${PROGRESS_TABLE} order by table_name`,
    );
    return rows.map((r) => ({
      table: r.table_name,
      sourceRows: Number(r.source_rows),
      sourceMaxRowid: Number(r.source_max_rowid),
      afterRowid: Number(r.after_rowid),
      copied: Number(r.copied),
      done: r.done,
    }));
  }

  /**
   * One batch: the rows in `data` (COPY text lines) into `table`, and the table's progress moved
   * to `afterRowid`, in one transaction. An interruption loses the batch and its line together,
   * so a resume starts exactly after the last batch that committed.
   */
  async copyBatch(table: string, columns: readonly string[], data: Buffer, rows: number, afterRowid: number, last: boolean): Promise<void> {
    // Without waiting for the WAL's flush: a crash of PostgreSQL may lose the last batches, but
    // each with its progress line (one transaction), so a resume copies them again, and only them.
    await this.client.query('begin; set local synchronous_commit = off');
    try {
      const took = await copyIn(this.client, `copy ${quote(table)} (${columns.map(quote).join(', ')}) from stdin`, data);
      if (took !== rows) throw new TargetError(`the target took ${took} rows of ${table} where ${rows} were sent`);
      await this.client.query(`update ${PROGRESS_TABLE} set after_rowid = $2, copied = copied + $3, done = $4 where table_name = $1`, [table, afterRowid, rows, last]);
      await this.client.query('commit');
    } catch (err) {
      await this.client.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  /** A table with nothing (left) to copy. */
  async markDone(table: string): Promise<void> {
    await this.client.query(`update ${PROGRESS_TABLE} set done = true where table_name = $1`, [table]);
  }

  /**
   * Builds the indexes set aside at the start, each in a transaction of its own with its line
   * deleted: an interruption here too is resumed where it stopped. `onStart` hears how many there are.
   */
  async buildDeferredIndexes(onStart: (count: number) => void): Promise<void> {
    const { rows } = await this.client.query<{ name: string; definition: string }>(`select name, definition from ${DEFERRED_INDEXES} order by step, name`);
    if (rows.length > 0) onStart(rows.length);
    // Index builds sort in memory up to this, per build (PostgreSQL's default is 64 MB).
    await this.client.query(`set maintenance_work_mem = '256MB'`);
    for (const r of rows) {
      await this.client.query('begin');
      try {
        await this.client.query(r.definition);
        await this.client.query(`delete from ${DEFERRED_INDEXES} where name = $1`, [r.name]);
        await this.client.query('commit');
      } catch (err) {
        await this.client.query('rollback').catch(() => undefined);
        throw err;
      }
    }
    await this.client.query('reset maintenance_work_mem');
  }

  /** Every column a sequence feeds (bigserial, identity). */
  async serialColumns(): Promise<SerialColumn[]> {
    const { rows } = await this.client.query<SerialColumn>(
      `select table_name as "table", column_name as "column", pg_get_serial_sequence(quote_ident(table_name), column_name) as sequence
         from information_schema.columns
        where table_schema = current_schema() and pg_get_serial_sequence(quote_ident(table_name), column_name) is not null
        order by table_name, column_name`,
    );
    return rows;
  }

  /**
   * Sets a sequence so the next value it hands out follows both the largest value in the column
   * and `atLeast` (the source's own counter, which remembers ids of deleted rows). Answers the
   * last value handed out, 0 when none.
   */
  async advanceSequence(s: SerialColumn, atLeast: bigint): Promise<number> {
    const { rows } = await this.client.query<{ last: string }>(`select greatest(coalesce(max(${quote(s.column)}), 0), $1::bigint)::text as last from ${quote(s.table)}`, [atLeast.toString()]);
    const last = BigInt(rows[0]?.last ?? '0');
    if (last > 0n) await this.client.query('select setval($1, $2::bigint, true)', [s.sequence, last.toString()]);
    else await this.client.query('select setval($1, 1, false)', [s.sequence]);
    return Number(last);
  }

  /**
   * The rows of `table` read back in full, in its key order, and summed up in canonical form
   * (copy-text.ts). Text sorts by its bytes ("C"), as SQLite's BINARY collation sorts it, and nulls
   * first, as SQLite puts them: both sides then give the rows in one order.
   */
  async checksum(table: TargetTable, onRows: (n: number) => void): Promise<RowChecksum> {
    const sum = new RowChecksum();
    const kinds = table.columns.map((c) => c.kind ?? 'text');
    const order = table.order
      .map((name) => `${quote(name)}${table.columns.find((c) => c.name === name)?.kind === 'text' ? ' collate "C"' : ''} nulls first`)
      .join(', ');
    // The sort of a table whose key is not in the collation of its index spills to disk below this.
    await this.client.query(`set work_mem = '256MB'`);
    await copyOutLines(this.client, `copy (select ${table.columns.map((c) => quote(c.name)).join(', ')} from ${quote(table.name)} order by ${order}) to stdout`, (line) => {
      sum.addLine(canonicalLineOfCopied(line, kinds));
      if (sum.rows % PROGRESS_ROWS === 0) onRows(PROGRESS_ROWS);
    });
    onRows(sum.rows % PROGRESS_ROWS);
    return sum;
  }

  /** Ends a verified migration: the progress table goes, and the planner gets statistics of the new rows. */
  async finish(): Promise<void> {
    await this.client.query(`drop table if exists ${PROGRESS_TABLE}, ${DEFERRED_INDEXES}`);
    await this.client.query('analyze');
  }
}
