import path from 'node:path';
import type { Config } from '../config.js';
import { parseOptions, UsageError } from './usage.js';
import { fmtBytes } from './progress.js';

type Out = { write(s: string): unknown; isTTY?: boolean };

export const BACKUP_USAGE = `usage: svc backup <file>
Writes a consistent copy of the node's SQLite database (SVC_DATA_DIR/svc.db) to <file> with
SQLite's online backup, while the node runs and takes writes; the copy is checked before it
replaces <file>. It holds no key: keep SVC_SECRET_KEY (a sandbox: secret.key in the data dir)
with it, or the restored node cannot open its webhook secrets. On PostgreSQL use pg_dump
(docs/operations.md "Backups").`;

export const RESTORE_USAGE = `usage: svc restore <file> [--force]
Puts a backup made by svc backup in place as SVC_DATA_DIR/svc.db. The node must be stopped.
Refuses a backup of a newer schema than this build's, and a data dir that holds a database
already unless --force is given. A backup of an older schema is migrated when the node starts.`;

export const MIGRATE_STORE_USAGE = `usage: svc migrate-store --to postgres://… [--from <file>] [--resume] [--batch-rows N]
Copies every table of the node's SQLite database (SVC_DATA_DIR/svc.db, or a backup with --from)
into an empty PostgreSQL database at this build's schema, keeping ids, sequences, cursors and
sealed secrets as they are, then verifies every table (row counts and checksums) and prints the
result. The node must be stopped. SVC_SECRET_KEY (or the sandbox's secret.key beside the source)
must be the key the source's secrets are sealed under; the cluster runs with the same key.
An interrupted run (Ctrl-C, a lost connection) continues with --resume. docs/operations.md
"From one node to a cluster".
  --to URL          the target database (it must hold no data)
  --from FILE       copy this SQLite file instead of the data dir's
  --resume          continue an interrupted migration on the target
  --batch-rows N    rows per COPY and transaction (default 5000)`;

function refusesPostgres(config: Config, cmd: string, instead: string): void {
  if (config.databaseUrl) throw new UsageError(`${cmd} works on the SQLite database of SVC_DATA_DIR, and SVC_DATABASE_URL is set: on PostgreSQL use ${instead} (docs/operations.md "Backups")`);
}

/** `svc backup <file>`. */
export async function backupCommand(argv: string[], config: Config, stdout: Out, stderr: Out): Promise<number> {
  const { positionals } = parseOptions(argv, {}, 1);
  const [file] = positionals;
  if (file === undefined) throw new UsageError('which file? svc backup <file>');
  refusesPostgres(config, 'svc backup', 'pg_dump');
  const { backupNode } = await import('../transfer/backup.js');
  const r = await backupNode(config.dataDir, file, stderr);
  stdout.write(
    `Backed up ${path.join(config.dataDir, 'svc.db')} to ${r.file}: ${fmtBytes(r.bytes)} in ${r.seconds.toFixed(1)} s, schema at ${r.migrations.at(-1) ?? 'none'}.\n` +
      `It holds no key: keep ${config.secretKey ? 'SVC_SECRET_KEY' : path.join(config.dataDir, 'secret.key')} with it.\n`,
  );
  return 0;
}

/** `svc restore <file> [--force]`. */
export async function restoreCommand(argv: string[], config: Config, stdout: Out): Promise<number> {
  const { values, positionals } = parseOptions(argv, { force: { type: 'boolean' } }, 1);
  const [file] = positionals;
  if (file === undefined) throw new UsageError('which backup? svc restore <file> [--force]');
  refusesPostgres(config, 'svc restore', 'pg_restore');
  const [{ restoreNode }, { givenKey }] = await Promise.all([import('../transfer/backup.js'), import('../secrets/key.js')]);
  const r = await restoreNode(file, config.dataDir, { force: values.force === true, key: givenKey(config, config.dataDir) });
  const notes = [
    r.standing.at === 'older' ? `Its schema is older than this build's: the node migrates it when it starts (${r.standing.missing.join(', ')}).` : null,
    r.keyUnchecked !== null
      ? `It holds values sealed under key id ${r.keyUnchecked}: start the node with the backed-up node's key (SVC_SECRET_KEY, or its secret.key copied into ${config.dataDir}).`
      : null,
  ].filter((n) => n !== null);
  stdout.write(`Restored ${path.resolve(file)} into ${r.file} (${fmtBytes(r.bytes)}${r.replaced ? ', replacing the database that was there' : ''}).${notes.map((n) => `\n${n}`).join('')}\n`);
  return 0;
}

export interface MigrateStoreArgs {
  to: string;
  from: string | null;
  resume: boolean;
  batchRows: number;
}

export async function parseMigrateStoreArgs(argv: string[]): Promise<MigrateStoreArgs> {
  const { values } = parseOptions(argv, { to: { type: 'string' }, from: { type: 'string' }, resume: { type: 'boolean' }, 'batch-rows': { type: 'string' } });
  if (values.to === undefined) throw new UsageError('--to postgres://… is required');
  if (!/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError('--to must be a postgres:// URL');
  const { parsePgUrl, PgUrlError } = await import('../store/sql/pg-targets.js');
  try {
    parsePgUrl(values.to);
  } catch (err) {
    if (err instanceof PgUrlError) throw new UsageError(`--to: ${err.message}`);
    throw err;
  }
  const batch = values['batch-rows'] === undefined ? 5000 : Number(values['batch-rows']);
  if (!Number.isInteger(batch) || batch < 1 || batch > 1_000_000) throw new UsageError('--batch-rows must be an integer from 1 to 1000000');
  return { to: values.to, from: values.from ?? null, resume: values.resume === true, batchRows: batch };
}

/** `svc migrate-store`: exit 0 once copied and verified; 130 when interrupted by Ctrl-C (resumable). */
export async function migrateStoreCommand(argv: string[], config: Config, stdout: Out, stderr: Out): Promise<number> {
  const args = await parseMigrateStoreArgs(argv);
  const [{ migrateStore, MigrateInterrupted }, { givenKey }] = await Promise.all([import('../transfer/migrate-store.js'), import('../secrets/key.js')]);
  const source = args.from === null ? path.join(config.dataDir, 'svc.db') : path.resolve(args.from);
  const key = givenKey(config, path.dirname(source));
  const stop = new AbortController();
  // The first Ctrl-C ends the run after the batch in flight, so the target keeps a clean point to resume from; a second one exits at once.
  const onSigint = () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
    stderr.write('\nStopping after the batch in flight (Ctrl-C again to quit at once; --resume continues either way)\n');
  };
  process.on('SIGINT', onSigint);
  try {
    const r = await migrateStore({ source, targetUrl: args.to, resume: args.resume, batchRows: args.batchRows, key: key?.key ?? null, keyFrom: key?.from ?? 'no key', out: stdout, log: stderr, signal: stop.signal });
    const rows = r.tables.reduce((n, t) => n + t.sourceRows, 0);
    const seqs = r.sequences.map((s) => `${s.table}.${s.column} at ${s.last.toLocaleString('en-US')}`).join(', ');
    stdout.write(
      `Migrated ${rows.toLocaleString('en-US')} rows in ${r.tables.length} tables and verified them in ${r.totalSeconds.toFixed(1)} s ` +
        `(copy: ${r.copiedRows.toLocaleString('en-US')} rows in ${r.copySeconds.toFixed(1)} s, ${Math.round(r.copiedRows / Math.max(r.copySeconds, 0.001)).toLocaleString('en-US')} rows/s).\n` +
        (seqs ? `Sequences continue after ${seqs}.\n` : '') +
        `Start the cluster's nodes with SVC_DATABASE_URL set to the target, SVC_REDIS_URL, and SVC_SECRET_KEY=${key ? (key.from === 'SVC_SECRET_KEY' ? 'the same key' : `the key in ${key.from}`) : 'a key of yours'}.\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof MigrateInterrupted) {
      stderr.write(`svc migrate-store: ${err.message}\n`);
      return 130;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
