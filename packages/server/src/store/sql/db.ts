import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { SecretBox } from '../../domain/secrets/sealed.js';
import type { Database } from './database.js';
import { migrationProvider } from '../migrations/index.js';
import { CachedStatements } from './statement-cache.js';
import { PgRowReader, SqliteRowReader, type RowReader } from './row-reader.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { PgPrimary, PrimaryPool } from './pg-primary.js';
import { GuardedPool } from './pg-guard.js';
import { parsePgUrl, type PgHost } from './pg-targets.js';

export type Engine = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  /** SQLite: the database file, for connections of their own (WAL checkpoints, bulk reads). */
  sqliteFile?: string;
  /** PostgreSQL: the pool under `kysely`, for the few reads that want rows as arrays. */
  pgPool?: PrimaryPool;
  /**
   * Bulk archive reads (the export's pages): on PostgreSQL a small pool of their own, so exports
   * queue among themselves and never for the connections live writes and reads need
   * (docs/decisions.md, "Export: off the live path"); on SQLite the service's handle.
   */
  bulk: { kysely: Kysely<Database>; pgPool?: PrimaryPool };
  /** The hot read paths' prepared statements (store/sql/row-reader.ts). */
  reader: RowReader;
  /** SQLite: the service connection's statement cache, for the hot writes of store/sql/write-tx.ts. */
  statements?: CachedStatements;
  close(): Promise<void>;
}

// int8 (bigserial, count(*)) arrives as a string by default; our values fit in a double.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DbOptions {
  dataDir: string;
  databaseUrl: string | null;
  /** SQLite file name inside dataDir. */
  file?: string;
  poolSize?: number;
  /** SQLite: checkpoint the WAL from a worker thread instead of inside commits (see WalCheckpointer). */
  backgroundCheckpoint?: boolean;
  /** SQLite: the size the WAL file is cut back to each time it starts over (default WAL_SIZE_LIMIT_BYTES). */
  walSizeLimitBytes?: number;
  /** Nice value the checkpointer thread gives itself (0: unchanged); see helper-threads.ts. */
  checkpointNice?: number;
  /** Seals secrets a migration finds in plaintext (docs/operations.md "Secrets at rest"). */
  secrets?: SecretBox | null;
  /**
   * PostgreSQL: told once when a pooled connection fails, idle or in use (the server restarted, an
   * administrator or an idle timeout ended it). A query in flight on it fails; the pool drops the
   * connection and the next query opens another.
   */
  onConnectionError?: (err: Error) => void;
  /** PostgreSQL with several hosts: told when the primary moves (docs/operations.md, "Database failover"). */
  onPrimarySwitch?: (from: PgHost, to: PgHost) => void;
}

/**
 * SQLite keeps a WAL file at the largest size it ever reached (an import, a migration, a burst)
 * unless told otherwise: each time a writer starts the WAL over it is cut back to this. Between two
 * starts the checkpointer lets ~1,000 frames (4 MB) gather (store/sql/wal-checkpointer.ts), so the
 * file stays far below 64 MB under sustained writes (docs/operations.md, "One process").
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/** 16 MB of 4 KB pages: where a commit checkpoints in SQLite's own way, when nothing else has. */
const WAL_BACKSTOP_FRAMES = 4096;

/**
 * Connections of the bulk pool: export pages at once. Two keep ten concurrent exports from
 * crowding live writes off the machine's CPUs, where four did not, and still serve them faster
 * together than one alone (bench/history/2026-11-27.md, "Isolation").
 */
const BULK_POOL_SIZE = 2;

export async function openDb(opts: DbOptions): Promise<Db> {
  let db: Db;
  if (opts.databaseUrl) {
    const targets = parsePgUrl(opts.databaseUrl);
    const primary = await PgPrimary.find(targets, opts.onPrimarySwitch);
    const pool = new PrimaryPool(targets, primary, opts.poolSize ?? 10, opts.onConnectionError);
    const bulkPool = new PrimaryPool(targets, primary, BULK_POOL_SIZE, opts.onConnectionError);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new GuardedPool(pool) }) });
    const bulk = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new GuardedPool(bulkPool) }) });
    db = {
      kysely,
      engine: 'postgres',
      pgPool: pool,
      bulk: { kysely: bulk, pgPool: bulkPool },
      reader: new PgRowReader(pool),
      close: async () => {
        primary.close();
        await bulk.destroy();
        await kysely.destroy();
      },
    };
  } else {
    fs.mkdirSync(opts.dataDir, { recursive: true });
    const sqlite = new SQLite(path.join(opts.dataDir, opts.file ?? 'svc.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('cache_size = -65536');
    sqlite.pragma(`journal_size_limit = ${opts.walSizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES}`);
    // The writer's own pass over the last frames, between two writes (store/sql/wal-checkpointer.ts).
    const catchUp = () => {
      if (!sqlite.open || sqlite.inTransaction) return;
      try {
        sqlite.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Busy or closing: the thread asks again at its next look.
      }
    };
    const checkpointer = opts.backgroundCheckpoint ? WalCheckpointer.start(sqlite.name, { nice: opts.checkpointNice ?? 0 }, catchUp) : null;
    // SQLite's own checkpoint in the commit stays as the backstop only, far above where the thread
    // and its catch-up keep the WAL: a write rate no checkpoint off the loop keeps up with still
    // finds the WAL bounded (store/sql/wal-checkpointer.ts).
    if (checkpointer) sqlite.pragma(`wal_autocheckpoint = ${WAL_BACKSTOP_FRAMES}`);
    const statements = new CachedStatements(sqlite);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
    const reader = new SqliteRowReader(sqlite.name);
    db = {
      kysely,
      engine: 'sqlite',
      sqliteFile: sqlite.name,
      bulk: { kysely },
      reader,
      statements,
      close: async () => {
        await reader.close();
        await checkpointer?.stop();
        await kysely.destroy();
      },
    };
  }
  try {
    await migrate(db, opts.secrets ?? null);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

export async function migrate(db: Db, secrets: SecretBox | null = null): Promise<void> {
  // Migrations are numbered by the change that needs them and may land in any order; each one
  // only adds, so a database that ran a later one first still takes an earlier one.
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider(db.engine, secrets), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${String(error)}`);
  }
}

/** Whether every migration this code knows has run (a node on an older schema is not ready). */
export async function migrationsAtHead(db: Db): Promise<boolean> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider(db.engine) });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}

/** A round trip to the database that touches no table: whether it answers at all (readiness). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
