import fs from 'node:fs';
import path from 'node:path';
import { SecretBox, sealedKeyId, type SecretKey } from '../domain/secrets/sealed.js';
import { keyMismatch } from '../secrets/key.js';
import { knownMigrations, schemaStanding, type SchemaStanding } from '../store/transfer/schema-version.js';
import { backupDatabase, dbFileOf, inUse, openExclusive, SqliteFile, SqliteFileError, type BackupStep } from '../store/transfer/sqlite-files.js';
import { Refused, type Out } from './report.js';

/** A backup or restore this command will not make, in one line; nothing was written. */
export class TransferRefused extends Refused {}

/** Runs `f`, a file-level step whose refusal (a running node, not a database) becomes this command's. */
function refusing<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof SqliteFileError) throw new TransferRefused(err.message);
    throw err;
  }
}

/** A progress line of pages: redrawn in place on a terminal, every few seconds otherwise. */
function pageProgress(log: Out): { step(s: BackupStep): void; end(s: BackupStep): void } {
  let last = 0;
  const line = (s: BackupStep) => {
    const done = s.totalPages - s.remainingPages;
    const ratio = s.totalPages === 0 ? 1 : done / s.totalPages;
    const width = 24;
    const filled = Math.round(ratio * width);
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${done.toLocaleString('en-US')} of ${s.totalPages.toLocaleString('en-US')} pages`;
  };
  return {
    step(s) {
      const now = Date.now();
      if (now - last < (log.isTTY ? 200 : 5000)) return;
      last = now;
      log.write(log.isTTY ? `\r\x1b[2K${line(s)}` : `${line(s)}\n`);
    },
    end(s) {
      log.write(log.isTTY ? `\r\x1b[2K${line(s)}\n` : `${line(s)}\n`);
    },
  };
}

export interface BackupResult {
  file: string;
  bytes: number;
  seconds: number;
  migrations: string[];
}

/**
 * `svc backup <file>`: a consistent copy of the data dir's database, taken with SQLite's online
 * backup while the node runs (store/transfer/sqlite-files.ts), checked, and only then put in
 * place under `file`; a failed backup leaves no file behind. The copy is a single file (rollback
 * journal), readable by any SQLite.
 */
export async function backupNode(dataDir: string, file: string, log: Out): Promise<BackupResult> {
  const started = Date.now();
  const source = dbFileOf(dataDir);
  if (!fs.existsSync(source)) throw new TransferRefused(`there is no database to back up at ${source} (SVC_DATA_DIR)`);
  const dest = path.resolve(file);
  if (dest === path.resolve(source)) throw new TransferRefused('the backup cannot be the database itself');
  if (!fs.existsSync(path.dirname(dest))) throw new TransferRefused(`the directory ${path.dirname(dest)} does not exist`);
  if (fs.existsSync(dest) && fs.statSync(dest).isDirectory()) throw new TransferRefused(`${dest} is a directory; name the backup file`);
  const tmp = `${dest}.partial-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  try {
    const progress = pageProgress(log);
    progress.end(await backupDatabase(source, tmp, (s) => progress.step(s)));
    const copy = SqliteFile.open(tmp);
    let migrations: string[];
    let bytes: number;
    try {
      const problem = copy.quickCheck();
      if (problem !== null) throw new Error(`the copy does not pass SQLite's quick_check (${problem}); the backup was not written`);
      migrations = copy.migrationsRun() ?? [];
      copy.standAlone();
      bytes = copy.bytes();
    } finally {
      copy.close();
    }
    fs.renameSync(tmp, dest);
    return { file: dest, bytes, seconds: (Date.now() - started) / 1000, migrations };
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) fs.rmSync(f, { force: true });
  }
}

export interface RestoreOptions {
  force: boolean;
  /** The key the node will start with (SVC_SECRET_KEY, or the data dir's sandbox key file); null when none. */
  key: { key: SecretKey; from: string } | null;
}

export interface RestoreResult {
  file: string;
  bytes: number;
  standing: SchemaStanding;
  /** The key id the backup's values are sealed under when no key was found to check them with; null otherwise. */
  keyUnchecked: string | null;
  replaced: boolean;
}

/**
 * `svc restore <file>`: puts a backup in place as the data dir's database. Refuses, before it
 * writes anything, a node running on the data dir, a backup of a newer schema than this build's,
 * a data dir that already holds a database (unless `force`), and a backup whose secrets the
 * node's key does not open.
 */
export async function restoreNode(file: string, dataDir: string, o: RestoreOptions): Promise<RestoreResult> {
  const from = path.resolve(file);
  const target = dbFileOf(dataDir);
  if (from === path.resolve(target)) throw new TransferRefused('the backup is the data dir\'s database itself');
  const backup = refusing(() => openExclusive(from, 'the backup'));
  try {
    const problem = backup.quickCheck();
    if (problem !== null) throw new TransferRefused(`the backup ${from} is damaged (SQLite's quick_check: ${problem})`);
    const ran = backup.migrationsRun();
    if (ran === null) throw new TransferRefused(`${from} is not an svc database (it has no migration table)`);
    const standing = schemaStanding(ran, await knownMigrations());
    if (standing.at === 'newer') throw new TransferRefused(`the backup's schema is newer than this build's (it ran ${standing.unknown.join(', ')}): restore it with that build or later`);

    const exists = fs.existsSync(target);
    if (exists && refusing(() => inUse(target))) throw new TransferRefused(`a node is running on ${dataDir} (${target} is open in another process): stop it first`);
    if (exists && fs.statSync(target).size > 0 && !o.force) {
      throw new TransferRefused(`${target} already holds a database: restoring replaces it; run again with --force to do so`);
    }

    const { check, endpointSecrets } = await backup.sealedValues();
    const sealed = check !== undefined || endpointSecrets.length > 0;
    if (sealed && o.key) {
      const mismatch = keyMismatch(new SecretBox(o.key.key), check, endpointSecrets);
      if (mismatch) {
        throw new TransferRefused(
          `the backup's secrets are sealed under key id ${mismatch.sealedUnder}, and ${o.key.from} holds key id ${o.key.key.id}: the node would not start; give it the key of the backed-up node (SVC_SECRET_KEY, or its secret.key in ${dataDir})`,
        );
      }
    }

    fs.mkdirSync(dataDir, { recursive: true });
    const tmp = path.join(dataDir, `${path.basename(target)}.restore-${process.pid}`);
    try {
      await backup.copyTo(tmp);
      const copy = SqliteFile.open(tmp);
      let bytes: number;
      try {
        bytes = copy.bytes();
      } finally {
        copy.close();
      }
      if (exists) {
        // Taken and let go: no node started meanwhile, and closing the last connection folds the old WAL into the old file.
        refusing(() => openExclusive(target, 'the database')).close();
      }
      for (const f of [`${target}-wal`, `${target}-shm`, `${target}-journal`]) fs.rmSync(f, { force: true });
      fs.renameSync(tmp, target);
      // Cached exports of closed seasons were made from the database just replaced (docs/operations.md "Data").
      fs.rmSync(path.join(dataDir, 'export-cache'), { recursive: true, force: true });
      const sealedUnder = sealedKeyId(check ?? endpointSecrets[0] ?? '') ?? 'unknown';
      return { file: target, bytes, standing, keyUnchecked: sealed && !o.key ? sealedUnder : null, replaced: exists };
    } finally {
      for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) fs.rmSync(f, { force: true });
    }
  } finally {
    backup.close();
  }
}

