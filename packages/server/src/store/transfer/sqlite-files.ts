import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../sql/database.js';
import { KEY_CHECK_META } from '../../domain/secrets/columns.js';
import { sealedValues } from '../accounts/sealed-values.js';
import { type SourceValue } from './copy-text.js';
import { SCHEMA_TABLES } from './tables.js';

/** The database file of a data dir (store/db.ts opens the same name). */
export const DB_FILE = 'svc.db';

export const dbFileOf = (dataDir: string): string => path.join(dataDir, DB_FILE);

/** A refusal of a file-level operation: one line for the operator (docs/operations.md "Backups"). */
export class SqliteFileError extends Error {}

const errCode = (err: unknown): string => (err instanceof Error && 'code' in err ? String(err.code) : '');

/**
 * Opens `file` for this process alone, or refuses while any other connection has it open.
 *
 * A node holds its database open for as long as it runs, and in WAL mode every connection keeps
 * a shared lock on the file from its first read until it closes (the checkpointer thread and the
 * bulk readers too). A connection in exclusive locking mode that begins an exclusive
 * transaction needs every other lock gone, so with no wait allowed it fails at once while a node
 * runs, whatever the process (a container on the same volume included: these are the kernel's
 * file locks). Once it succeeds the lock is kept until this connection closes, so no node can
 * start on the file meanwhile: its first statement waits for the lock, then fails.
 */
export function openExclusive(file: string, what: string): SqliteFile {
  if (!fs.existsSync(file)) throw new SqliteFileError(`${what} ${file} does not exist`);
  let db: SQLite.Database;
  try {
    db = new SQLite(file, { fileMustExist: true });
  } catch (err) {
    throw new SqliteFileError(`${what} ${file} cannot be opened: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if (errCode(err) === 'SQLITE_BUSY') throw new SqliteFileError(`${what} ${file} is open in another process: a node is running on it; stop it first`);
    if (errCode(err) === 'SQLITE_NOTADB') throw new SqliteFileError(`${what} ${file} is not a SQLite database`);
    throw new SqliteFileError(`${what} ${file} cannot be locked: ${err instanceof Error ? err.message : String(err)}`);
  }
  return new SqliteFile(db);
}

/** Whether another connection has `file` open (a running node): the probe of `openExclusive`, let go at once. */
export function inUse(file: string): boolean {
  try {
    openExclusive(file, 'database').close();
    return false;
  } catch (err) {
    if (err instanceof SqliteFileError && /open in another process/.test(err.message)) return true;
    // Not a database at all: nothing runs on it.
    if (err instanceof SqliteFileError && /is not a SQLite database/.test(err.message)) return false;
    throw err;
  }
}

/** A SQLite table of the data: its name and its columns in declared order. */
export interface SqliteTable {
  name: string;
  columns: string[];
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

const isSourceValue = (v: unknown): v is SourceValue => v === null || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || Buffer.isBuffer(v);

/** A raw row of a statement with safe integers: what SQLite's storage classes come as. */
function sourceValues(row: unknown): SourceValue[] {
  if (!Array.isArray(row)) throw new Error('a raw row that is not an array');
  const out: SourceValue[] = [];
  for (const v of row) {
    if (!isSourceValue(v)) throw new Error(`a value of type ${typeof v} from SQLite`);
    out.push(v);
  }
  return out;
}

/**
 * A SQLite database file opened for a transfer (a source to copy, a backup to check): the reads
 * `svc backup`, `svc restore` and `svc migrate-store` make of any table, by the schema's own
 * description of it.
 */
export class SqliteFile {
  constructor(private readonly db: SQLite.Database) {}

  /** Opens `file`, which must exist, as any connection would (its WAL folded in). */
  static open(file: string): SqliteFile {
    return new SqliteFile(new SQLite(file, { fileMustExist: true }));
  }

  close(): void {
    this.db.close();
  }

  /** The migrations the database has run, or null when it has no migration table (not an svc database). */
  migrationsRun(): string[] | null {
    const has = this.db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`).get();
    if (!has) return null;
    return this.db
      .prepare('select name from kysely_migration order by name')
      .pluck()
      .all()
      .map((n) => String(n));
  }

  /** Every table holding data, read from the schema itself: SQLite's own and the migrator's left out. */
  dataTables(): SqliteTable[] {
    const names = this.db
      .prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`)
      .pluck()
      .all()
      .map((n) => String(n))
      .filter((n) => !SCHEMA_TABLES.includes(n));
    return names.map((name) => ({
      name,
      columns: this.db
        .prepare(`select name from pragma_table_info(?) order by cid`)
        .pluck()
        .all(name)
        .map((c) => String(c)),
    }));
  }

  /** The AUTOINCREMENT counters: the largest id each such table ever handed out, deleted rows included. */
  autoincrementCounters(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    const has = this.db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'sqlite_sequence'`).get();
    if (!has) return out;
    for (const row of this.db.prepare('select name, seq from sqlite_sequence').safeIntegers(true).all()) {
      if (typeof row === 'object' && row !== null && 'name' in row && 'seq' in row && typeof row.seq === 'bigint') out.set(String(row.name), row.seq);
    }
    return out;
  }

  /** A table's row count and largest rowid (0 when empty). */
  tableExtent(table: string): { rows: number; maxRowid: number } {
    const row = this.db.prepare(`select count(*) as n, coalesce(max(rowid), 0) as m from ${quote(table)}`).get();
    if (typeof row !== 'object' || row === null || !('n' in row) || !('m' in row)) throw new Error(`no extent of ${table}`);
    return { rows: Number(row.n), maxRowid: Number(row.m) };
  }

  /** Up to `limit` rows after `afterRowid` in rowid order, as their rowid and the values of `columns` (integers exact). */
  rowsAfter(table: string, columns: readonly string[], afterRowid: number, limit: number): { rowid: number; values: SourceValue[] }[] {
    const stmt = this.db.prepare(`select rowid, ${columns.map(quote).join(', ')} from ${quote(table)} where rowid > ? order by rowid limit ?`).raw(true).safeIntegers(true);
    return stmt.all(afterRowid, limit).map((r) => {
      const values = sourceValues(r);
      return { rowid: Number(values[0]), values: values.slice(1) };
    });
  }

  /** Every row's values of `columns` in the order of `orderBy` (ascending, nulls first), one at a time: a table of any size in flat memory. */
  *allRows(table: string, columns: readonly string[], orderBy: readonly string[]): Generator<SourceValue[]> {
    const stmt = this.db.prepare(`select ${columns.map(quote).join(', ')} from ${quote(table)} order by ${orderBy.map(quote).join(', ')}`).raw(true).safeIntegers(true);
    for (const r of stmt.iterate()) yield sourceValues(r);
  }

  /** The key check and every sealed endpoint secret, read by their owner modules through this connection. */
  sealedValues(): Promise<{ check: string | undefined; endpointSecrets: string[] }> {
    return sealedValues({ kysely: new Kysely<Database>({ dialect: new SqliteDialect({ database: this.db }) }) }, KEY_CHECK_META);
  }

  /** `pragma quick_check`: null when it passes, else SQLite's first complaint. */
  quickCheck(): string | null {
    const result = this.db.pragma('quick_check', { simple: true });
    return result === 'ok' ? null : String(result);
  }

  /** The database's size in bytes (pages times page size). */
  bytes(): number {
    return Number(this.db.pragma('page_count', { simple: true })) * Number(this.db.pragma('page_size', { simple: true }));
  }

  /** Makes the file stand alone: a rollback journal instead of a WAL, so no -wal file ever belongs with it. */
  standAlone(): void {
    this.db.pragma('journal_mode = DELETE');
  }

  /** Copies the whole database to `dest` with SQLite's backup (a consistent copy: this connection holds its lock). */
  async copyTo(dest: string): Promise<void> {
    await this.db.backup(dest);
  }
}

/** What a backup in progress has done: SQLite's page counts. */
export interface BackupStep {
  totalPages: number;
  remainingPages: number;
}

/** Pages copied per step of a backup: 4 MB at SQLite's default page size. */
const BACKUP_STEP_PAGES = 1024;

/**
 * A consistent copy of the database in `source` written to `dest` (which must not exist yet) with
 * SQLite's online backup, while other processes keep writing to it. The copy is taken inside one
 * read transaction on the source, so it is the database as of its first step: other connections'
 * commits meanwhile go to the WAL and do not restart it (a backup outside a transaction starts
 * over after every foreign write, and under steady writes might never end). The WAL cannot be
 * checkpointed past that snapshot until the copy is done, so it grows by what is written meanwhile.
 */
export async function backupDatabase(source: string, dest: string, onStep: (s: BackupStep) => void): Promise<BackupStep> {
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.exec('BEGIN');
    db.prepare('select count(*) from sqlite_master').get();
    const done = await db.backup(dest, {
      progress: (p) => {
        onStep(p);
        return BACKUP_STEP_PAGES;
      },
    });
    db.exec('COMMIT');
    return done;
  } finally {
    db.close();
  }
}
