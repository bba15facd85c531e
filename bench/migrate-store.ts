// bench/migrate-store: the downtime of moving a node from SQLite to PostgreSQL
// (docs/operations.md "From one node to a cluster"). `svc migrate-store` (the compiled command, as an
// operator runs it) copies a database of 1,000,000 events into an empty PostgreSQL and verifies it;
// the ceiling is `pg_restore` of the same data (a custom-format `pg_dump` of what the migration
// wrote) into another empty database: PostgreSQL loading its own dump, with its indexes built
// after the rows, on the same machine in the same run. Both are timed end to end, schema and
// indexes included; rows/s counts every row of every table.
//
// Once:  node --import tsx bench/gen-large.ts --events 1000000 --seed 42 --data-dir bench/.out/large1m
//        (again after a schema change: it migrates the database, and migrate-store refuses an older one)
// Run:   npm run build && node --import tsx bench/migrate-store.ts   (BENCH_DATA_DIR=bench/.out/large1m BENCH_ROUNDS=2
//        BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/postgres)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fmt, pgDatabaseUrl, ROOT } from './lib.js';

const DATA_DIR = path.resolve(ROOT, process.env.BENCH_DATA_DIR ?? 'bench/.out/large1m');
const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/** Runs a command to completion; resolves with its output and wall time, rejects on a non-zero exit. */
function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.once('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve({ stdout, stderr, seconds });
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
    });
  });
}

async function admin<T>(f: (c: pg.Client) => Promise<T>, url = ADMIN_URL): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

/** Every table's row count, the migrator's own left out. */
async function rowCounts(url: string): Promise<Map<string, number>> {
  return admin(async (c) => {
    const tables = await c.query<{ t: string }>(`select table_name as t from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely%' order by 1`);
    const out = new Map<string, number>();
    for (const { t } of tables.rows) out.set(t, Number((await c.query<{ n: string }>(`select count(*)::text as n from "${t}"`)).rows[0].n));
    return out;
  }, url);
}

interface Round {
  rows: number;
  migrateCopyS: number;
  migrateTotalS: number;
  restoreS: number;
}

async function round(i: number): Promise<Round> {
  const suffix = `${process.pid}_${i}`;
  const [migrated, restored] = [`svc_bench_migrate_${suffix}`, `svc_bench_restore_${suffix}`];
  await admin(async (c) => {
    for (const d of [migrated, restored]) {
      await c.query(`drop database if exists ${d} with (force)`);
      await c.query(`create database ${d}`);
    }
  });
  const dump = path.join(os.tmpdir(), `svc-bench-migrate-${suffix}.dump`);
  try {
    const migrateUrl = pgDatabaseUrl(ADMIN_URL, migrated);
    const m = await run(process.execPath, ['--conditions=svc-compiled', 'packages/server/dist/main.js', 'migrate-store', '--to', migrateUrl], {
      SVC_DATA_DIR: DATA_DIR,
      SVC_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    });
    const copy = /copy: ([\d,]+) rows in ([\d.]+) s/.exec(m.stdout);
    if (!copy || /DIFFERS/.test(m.stdout)) throw new Error(`unexpected migrate-store output:\n${m.stdout}`);
    const counts = await rowCounts(migrateUrl);
    const rows = [...counts.values()].reduce((a, b) => a + b, 0);

    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, migrateUrl]);
    const restoreUrl = pgDatabaseUrl(ADMIN_URL, restored);
    const r = await run('pg_restore', ['--no-owner', `--dbname=${restoreUrl}`, dump]);
    const again = await rowCounts(restoreUrl);
    for (const [t, n] of counts) if (again.get(t) !== n) throw new Error(`pg_restore: ${t} has ${again.get(t)} rows, the migration ${n}`);
    process.stderr.write(`[bench/migrate-store] round ${i + 1}: ${fmt(rows)} rows; migrate-store ${fmt(m.seconds, 1)} s (copy ${copy[2]} s), pg_restore ${fmt(r.seconds, 1)} s\n`);
    return { rows, migrateCopyS: Number(copy[2]), migrateTotalS: m.seconds, restoreS: r.seconds };
  } finally {
    fs.rmSync(dump, { force: true });
    await admin(async (c) => {
      for (const d of [migrated, restored]) await c.query(`drop database if exists ${d} with (force)`);
    });
  }
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(DATA_DIR, 'svc.db'))) throw new Error(`no database in ${DATA_DIR}: node --import tsx bench/gen-large.ts --events 1000000 --seed 42 --data-dir ${path.relative(ROOT, DATA_DIR)}`);
  if (!fs.existsSync(path.join(ROOT, 'packages/server/dist/main.js'))) throw new Error('npm run build first: the bench runs the compiled svc');
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(i));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rows = rounds[0].rows;
  const lines = [
    `bench/migrate-store — ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, ${(await admin((c) => c.query<{ v: string }>("select current_setting('server_version') as v"))).rows[0].v} PostgreSQL; ` +
      `${path.relative(ROOT, DATA_DIR)}/svc.db (${fmt(fs.statSync(path.join(DATA_DIR, 'svc.db')).size / 1e6)} MB), ${fmt(rows)} rows`,
    '',
    '| round | migrate-store: copy s (rows/s) | migrate-store: whole run s, verification included (rows/s) | pg_restore s (rows/s) | pg_restore ÷ migrate-store (whole run) |',
    '|---|---|---|---|---|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${fmt(r.migrateCopyS, 1)} (${fmt(r.rows / r.migrateCopyS)}) | ${fmt(r.migrateTotalS, 1)} (${fmt(r.rows / r.migrateTotalS)}) | ${fmt(r.restoreS, 1)} (${fmt(r.rows / r.restoreS)}) | ${fmt(r.restoreS / r.migrateTotalS, 2)} |`,
    ),
    '',
    `Median: migrate-store ${fmt(median(rounds.map((r) => r.migrateTotalS)), 1)} s for the whole run (copy ${fmt(median(rounds.map((r) => r.migrateCopyS)), 1)} s), ` +
      `pg_restore ${fmt(median(rounds.map((r) => r.restoreS)), 1)} s: the migration runs at ${fmt(median(rounds.map((r) => r.restoreS / r.migrateTotalS)) * 100)} % of pg_restore's rate ` +
      `(${fmt(median(rounds.map((r) => r.restoreS / r.migrateCopyS)) * 100)} % counting its copy alone).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench/migrate-store: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
