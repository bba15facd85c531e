import { SecretBox, type SecretKey } from '../domain/secrets/sealed.js';
import { Progress } from '../cli/progress.js';
import { keyMismatch } from '../secrets/key.js';
import { openDb } from '../store/sql/db.js';
import { canonicalLineOf, canonicalOf, copyField, CopyValueError, RowChecksum, type ColumnKind } from '../store/transfer/copy-text.js';
import { PgTarget, type TableProgress, type TargetTable } from '../store/transfer/pg-target.js';
import { knownMigrations, schemaStanding } from '../store/transfer/schema-version.js';
import { openExclusive, type SqliteFile, type SqliteTable } from '../store/transfer/sqlite-files.js';
import { PER_NODE_TABLES } from '../store/transfer/tables.js';
import { alignedTable, Refused, type Out } from './report.js';

/** A migration this command will not run, said in one line; nothing was written to the target. */
export class MigrateRefused extends Refused {}

/** Stopped between two batches (Ctrl-C): what is on the target is whole, and `--resume` continues. */
export class MigrateInterrupted extends Error {}

export interface MigrateStoreOptions {
  /** The SQLite database to copy: a node's `svc.db` or a backup. */
  source: string;
  targetUrl: string;
  resume: boolean;
  /** Rows per COPY, each in a transaction with its progress line. */
  batchRows: number;
  /** The key the cluster will run with; null when none was given or found. */
  key: SecretKey | null;
  /** Where the key came from, for messages (`SVC_SECRET_KEY`, a key file's path). */
  keyFrom: string;
  /** The verification table. */
  out: Out;
  /** Progress and what is being done (stderr). */
  log: Out;
  signal?: AbortSignal;
}

export interface TableCheck {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceSum: string;
  targetSum: string;
}

export interface MigrateSummary {
  tables: TableCheck[];
  /** Rows copied by this run (a resumed run counts only its own). */
  copiedRows: number;
  copySeconds: number;
  totalSeconds: number;
  /** Each sequence-fed column and the last value it has handed out. */
  sequences: { table: string; column: string; last: number }[];
  skipped: string[];
}

/** A table to copy: the source's columns in the target's order, with how each is written. */
interface Plan {
  table: string;
  columns: string[];
  kinds: ColumnKind[];
  target: TargetTable;
}

/**
 * `svc migrate-store`: every table of a node's SQLite database into an empty PostgreSQL at this
 * build's schema, ids, seqs, cursors and sealed values kept exactly, then verified table by table
 * (docs/operations.md "From one node to a cluster"). Every refusal comes before the first write
 * to the target.
 */
export async function migrateStore(o: MigrateStoreOptions): Promise<MigrateSummary> {
  const started = Date.now();
  let source: SqliteFile;
  try {
    source = openExclusive(o.source, 'the source');
  } catch (err) {
    throw new MigrateRefused(err instanceof Error ? err.message : String(err));
  }
  try {
    const known = await knownMigrations();
    const ran = source.migrationsRun();
    if (ran === null) throw new MigrateRefused(`the source ${o.source} is not an svc database (it has no migration table)`);
    const standing = schemaStanding(ran, known);
    if (standing.at === 'newer') throw new MigrateRefused(`the source's schema is newer than this build's (it ran ${standing.unknown.join(', ')}): run migrate-store of that build or later`);
    if (standing.at === 'older') {
      throw new MigrateRefused(`the source's schema is older than this build's (${standing.missing.join(', ')} not run): start a node of this build on it once (svc import does too), stop it, then migrate`);
    }
    await checkKey(source, o);

    const target = await PgTarget.connect(o.targetUrl).catch((err: unknown) => {
      throw new MigrateRefused(err instanceof Error ? err.message : String(err));
    });
    try {
      return await copyAndVerify(source, target, known, o, started);
    } finally {
      await target.close();
    }
  } finally {
    source.close();
  }
}

/** The source's sealed values must open under the key the cluster will have. */
async function checkKey(source: SqliteFile, o: MigrateStoreOptions): Promise<void> {
  const { check, endpointSecrets } = await source.sealedValues();
  if (check === undefined && endpointSecrets.length === 0) return;
  if (o.key === null) {
    throw new MigrateRefused(`the source holds secrets sealed under a deployment key, and no key was given: set SVC_SECRET_KEY to the key its node ran with (a sandbox keeps it in secret.key in its data dir)`);
  }
  const mismatch = keyMismatch(new SecretBox(o.key), check, endpointSecrets);
  if (mismatch) {
    throw new MigrateRefused(
      `${o.keyFrom} (key id ${o.key.id}) is not the key the source's secrets are sealed under (key id ${mismatch.sealedUnder}): give the key its node ran with; the cluster must run with it too`,
    );
  }
}

async function copyAndVerify(source: SqliteFile, target: PgTarget, known: string[], o: MigrateStoreOptions, started: number): Promise<MigrateSummary> {
  const targetRan = await target.migrationsRun();
  if (targetRan !== null) {
    const standing = schemaStanding(targetRan, known);
    if (standing.at === 'newer') throw new MigrateRefused(`the target's schema is newer than this build's (it ran ${standing.unknown.join(', ')})`);
  }
  const resuming = await target.hasProgress();
  if (resuming && !o.resume) throw new MigrateRefused('the target holds an interrupted migration: run the same command with --resume to finish it');
  if (!resuming) {
    const existing = await target.tables();
    const busy = await target.firstWithRows(existing.map((t) => t.name));
    if (busy !== null) {
      throw new MigrateRefused(
        o.resume
          ? `the target holds data (table ${busy} has rows) and no interrupted migration to resume`
          : `the target already holds data (table ${busy} has rows): migrate into an empty database (createdb, no node started on it)`,
      );
    }
    // Builds the schema of this build on the empty target (the migrator's own transactions).
    const db = await openDb({ dataDir: '', databaseUrl: o.targetUrl, poolSize: 1 });
    await db.close();
  }

  const plans = plan(source.dataTables(), await target.tables());
  const skipped = source.dataTables()
    .map((t) => t.name)
    .filter((n) => PER_NODE_TABLES.includes(n));
  const extents = new Map(plans.map((p) => [p.table, source.tableExtent(p.table)]));
  if (!resuming) {
    await target.startProgress(plans.map((p) => ({ table: p.table, sourceRows: extents.get(p.table)?.rows ?? 0, sourceMaxRowid: extents.get(p.table)?.maxRowid ?? 0 })));
  }
  const progress = new Map((await target.progress()).map((p) => [p.table, p]));
  for (const p of plans) {
    const line = progress.get(p.table);
    const now = extents.get(p.table);
    if (!line || !now) throw new MigrateRefused(`the interrupted migration on the target has no line for table ${p.table}: the source is not the one it began with`);
    if (line.sourceRows !== now.rows || line.sourceMaxRowid !== now.maxRowid) {
      throw new MigrateRefused(
        `the source changed since the interrupted migration began (${p.table}: ${line.sourceRows} rows then, ${now.rows} now): drop the target's tables and migrate again`,
      );
    }
  }

  const copyStarted = Date.now();
  const remaining = plans.reduce((n, p) => n + Math.max(0, (extents.get(p.table)?.rows ?? 0) - (progress.get(p.table)?.copied ?? 0)), 0);
  const bar = new Progress(o.log, remaining);
  o.log.write(`${resuming ? 'Resuming' : 'Copying'} ${plans.length} tables (${remaining.toLocaleString('en-US')} rows${resuming ? ' left' : ''}) from ${o.source}\n`);
  for (const p of plans) {
    const line = progress.get(p.table);
    if (!line || line.done) continue;
    await copyTable(source, target, p, line, o, bar);
  }
  bar.draw(true);
  const copiedRows = bar.counts.records;
  if (o.signal?.aborted) throw new MigrateInterrupted('interrupted before the indexes were built; every row is copied: run the same command with --resume');
  await target.buildDeferredIndexes((n) => o.log.write(`Building the ${n} keys and indexes set aside during the copy\n`));
  const copySeconds = (Date.now() - copyStarted) / 1000;

  const counters = source.autoincrementCounters();
  const sequences: MigrateSummary['sequences'] = [];
  for (const s of await target.serialColumns()) {
    sequences.push({ table: s.table, column: s.column, last: await target.advanceSequence(s, counters.get(s.table) ?? 0n) });
  }

  o.log.write('Verifying every table (row counts and checksums of both sides)\n');
  const total = [...extents.values()].reduce((n, e) => n + e.rows, 0);
  const vbar = new Progress(o.log, total * 2);
  const checks: TableCheck[] = [];
  // Described again now that the keys are back: both sides are read in primary-key order (a
  // resumed run found them set aside).
  const described = new Map((await target.tables()).map((t) => [t.name, t]));
  for (const planned of plans) {
    if (o.signal?.aborted) throw new MigrateInterrupted('interrupted during the verification; every row is copied: run the same command with --resume to verify it');
    const p = { ...planned, target: described.get(planned.table) ?? planned.target };
    const tick = (n: number) => vbar.add(n, 0);
    const [sum, back] = await Promise.all([sourceChecksum(source, p, tick), target.checksum(p.target, tick)]);
    checks.push({ table: p.table, sourceRows: sum.rows, targetRows: back.rows, sourceSum: sum.hex(), targetSum: back.hex() });
  }
  vbar.draw(true);
  const failed = checks.filter((c) => c.sourceRows !== c.targetRows || c.sourceSum !== c.targetSum);
  o.out.write(`${verificationTable(checks, skipped)}\n`);
  if (failed.length > 0) {
    throw new Error(`verification failed for ${failed.map((c) => c.table).join(', ')}: the target differs from the source; drop the target's tables and migrate again`);
  }
  await target.finish();
  return { tables: checks, copiedRows, copySeconds, totalSeconds: (Date.now() - started) / 1000, sequences, skipped };
}

/** The tables to copy: every data table of the source but the per-node ones, each matched to the target's by its columns. */
function plan(sourceTables: SqliteTable[], targetTables: TargetTable[]): Plan[] {
  const byName = new Map(targetTables.map((t) => [t.name, t]));
  const out: Plan[] = [];
  for (const s of sourceTables) {
    if (PER_NODE_TABLES.includes(s.name)) continue;
    const t = byName.get(s.name);
    if (!t) throw new MigrateRefused(`the target has no table ${s.name}: its schema is not this build's`);
    const sourceColumns = new Set(s.columns);
    const extra = t.columns.find((c) => !sourceColumns.has(c.name));
    const missing = s.columns.find((c) => !t.columns.some((tc) => tc.name === c));
    if (extra || missing) {
      throw new MigrateRefused(`table ${s.name} differs between source and target (column ${extra?.name ?? missing ?? '?'}): their schemas are not the same build's`);
    }
    const untyped = t.columns.find((c) => c.kind === null);
    if (untyped) throw new MigrateRefused(`column ${s.name}.${untyped.name} has type ${untyped.type}, which migrate-store cannot copy`);
    out.push({ table: s.name, columns: t.columns.map((c) => c.name), kinds: t.columns.map((c) => c.kind ?? 'text'), target: t });
  }
  return out;
}

/** A batch ready to send: its COPY text, its row count and the rowid of its last row. */
interface Batch {
  data: Buffer;
  rows: number;
  lastRowid: number;
}

/** Rows encoded between two turns of the event loop, so the target's answers are handled meanwhile. */
const SLICE_ROWS = 500;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The next batch of `p` after `after`, read at once and encoded in slices; null when there is none. */
async function prepareBatch(source: SqliteFile, p: Plan, after: number, batchRows: number): Promise<Batch | null> {
  const rows = source.rowsAfter(p.table, p.columns, after, batchRows);
  if (rows.length === 0) return null;
  let text = '';
  for (let at = 0; at < rows.length; at += SLICE_ROWS) {
    if (at > 0) await turn();
    for (const r of rows.slice(at, at + SLICE_ROWS)) {
      let l = '';
      for (let i = 0; i < r.values.length; i++) {
        let canonical: string | null;
        try {
          canonical = canonicalOf(r.values[i], p.kinds[i]);
        } catch (err) {
          if (err instanceof CopyValueError) throw new Error(`${p.table}.${p.columns[i]} (rowid ${r.rowid}): ${err.message}`);
          throw err;
        }
        l += (i > 0 ? '\t' : '') + copyField(canonical, p.kinds[i]);
      }
      text += `${l}\n`;
    }
  }
  return { data: Buffer.from(text, 'utf8'), rows: rows.length, lastRowid: rows[rows.length - 1].rowid };
}

/**
 * Copies what is left of one table, batch after batch. The next batch is read and encoded while
 * the target takes the one before: the two processes work at once, and the order in which
 * batches commit (and so the progress line) is unchanged.
 */
async function copyTable(source: SqliteFile, target: PgTarget, p: Plan, line: TableProgress, o: MigrateStoreOptions, bar: Progress): Promise<void> {
  let next = prepareBatch(source, p, line.afterRowid, o.batchRows);
  for (;;) {
    const batch = await next;
    if (batch === null) {
      await target.markDone(p.table);
      return;
    }
    if (o.signal?.aborted) throw new MigrateInterrupted(`interrupted during ${p.table}; what was copied is kept: run the same command with --resume`);
    const last = batch.rows < o.batchRows;
    const sending = target.copyBatch(p.table, p.columns, batch.data, batch.rows, batch.lastRowid, last);
    next = last ? Promise.resolve(null) : prepareBatch(source, p, batch.lastRowid, o.batchRows);
    // A failed send ends the run; the batch being prepared then is left unused (it wrote nothing).
    next.catch(() => undefined);
    await sending;
    bar.add(batch.rows, batch.data.length);
    if (last) return;
  }
}

/**
 * The source's side of a table's verification, read in key order and summed in slices between
 * turns of the event loop, while the target's side streams in (PgTarget.checksum): the two
 * databases are read at once.
 */
async function sourceChecksum(source: SqliteFile, p: Plan, onRows: (n: number) => void): Promise<RowChecksum> {
  const sum = new RowChecksum();
  for (const values of source.allRows(p.table, p.columns, p.target.order)) {
    sum.addLine(canonicalLineOf(values, p.kinds));
    if (sum.rows % SLICE_ROWS === 0) {
      onRows(SLICE_ROWS);
      await turn();
    }
  }
  onRows(sum.rows % SLICE_ROWS);
  return sum;
}

/** The verification as an aligned table: each copied table's counts and checksums, then the per-node ones. */
function verificationTable(checks: TableCheck[], skipped: string[]): string {
  const rows = checks.map((c) => [
    c.table,
    c.sourceRows.toLocaleString('en-US'),
    c.targetRows.toLocaleString('en-US'),
    c.sourceSum.slice(0, 16),
    c.targetSum.slice(0, 16),
    c.sourceRows === c.targetRows && c.sourceSum === c.targetSum ? 'ok' : 'DIFFERS',
  ]);
  for (const s of skipped) rows.push([s, '', '', '', '', 'per node: not copied, starts empty']);
  return alignedTable(['table', 'source rows', 'target rows', 'source checksum', 'target checksum', ''], rows, [false, true, true, false, false, false]);
}
