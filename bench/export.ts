// bench/export: GET /v1/export of one season of 100,000 and one of 1,000,000 events from a
// server in a child process; lines/s, bytes/s and the server's peak RSS (sampled every 100 ms),
// against the ceiling: the same bytes read from a file and served by a bare node:http server.
// Two paths: the database (every first export of a season, and any with from/to/after) and the
// export cache (later exports of a whole closed season: a file written by the first one).
// Run: node --import tsx bench/export.ts            (SQLite, data in bench/.out/export-large)
//      node --import tsx bench/export.ts --pg       (PostgreSQL database svc_bench_export, or BENCH_PG_DB)
// The first run generates the data (bench/gen-large.ts, seed 42), which takes minutes; later runs
// reuse it (generation is a no-op when done). BENCH_PG_FRESH=1 drops the database first.
// With --formats: the same seasons as format=ndjson, csv and parquet (docs/decisions.md "Export
// formats"), rows/s of each against NDJSON's on the same path (goal ≥ 0.5) and the server's peak
// RSS at 100,000 and 1,000,000 events (flat memory: the 1M export peaks where the 100k one does).
// With --pg a second baseline, the database floor: PostgreSQL alone streaming the rows the export
// reads (seq and stored JSON of the season's confirmed events, in seq order) in one binary COPY to
// psql, which discards them: no svc, no JavaScript, no HTTP. What no client of this database
// could beat on this machine, so the ceiling ratio a PostgreSQL export can reach is at most its.
// --formats can be narrowed, to measure one change in less time (NDJSON, each ratio's baseline,
// is always measured): BENCH_FORMATS=parquet (of csv,parquet), BENCH_EVENTS=1000000 (of
// 100000,1000000), BENCH_PATHS=database (of database,cached).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { genLarge } from './gen-large.js';
import { BENCH_KEY, ROOT, fmt, pgDatabaseUrl, startProcess, startSvc, stop } from './lib.js';

const PG = process.argv.includes('--pg');
const FORMATS = process.argv.includes('--formats');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PORT = 18090;
const CEILING_PORT = 18091;
const OUT = path.join(ROOT, 'bench/.out');
const DATA_DIR = path.join(OUT, PG ? 'export-large-pg' : 'export-large');
const PG_ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = process.env.BENCH_PG_DB ?? 'svc_bench_export';
const SIZES = [
  { league: 'xbm', events: 100_000 },
  { league: 'xbl', events: 1_000_000 },
];
/** A comma-separated env list, or null when unset. */
const envList = (name: string): string[] | null => process.env[name]?.split(',').map((s) => s.trim()) ?? null;
const FORMAT_LIST = ['ndjson', ...(envList('BENCH_FORMATS') ?? ['csv', 'parquet']).filter((f) => f !== 'ndjson')];
const FORMAT_SIZES = SIZES.filter((s) => envList('BENCH_EVENTS')?.includes(String(s.events)) ?? true);
const FORMAT_PATHS = [false, true].filter((cached) => envList('BENCH_PATHS')?.includes(cached ? 'cached' : 'database') ?? true);

/** Each size is one season (2025) of its own league, so one request exports all of it. */
async function prepare(): Promise<string | null> {
  let databaseUrl: string | null = null;
  if (PG) {
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    if (process.env.BENCH_PG_FRESH === '1') await admin.query(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [PG_DB]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${PG_DB}`);
    await admin.end();
    databaseUrl = pgDatabaseUrl(PG_ADMIN, PG_DB);
  }
  for (const s of SIZES) {
    await genLarge(
      { league: s.league, events: s.events, seasons: 1, firstSeason: 2025, seed: 42, dataDir: DATA_DIR, databaseUrl, archive: true },
      (l) => process.stderr.write(`${l}\n`),
    );
  }
  return databaseUrl;
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** CPU-seconds a process has used so far, its threads' (ended ones too) included. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks of 1/100 s (USER_HZ on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Samples a process's RSS every 100 ms until stopped; returns the peak in MiB. */
function sampleRss(pid: number): { stop(): number } {
  let peak = rssKiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKiB(pid));
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssKiB(pid)) / 1024;
    },
  };
}

interface Run {
  lines: number;
  bytes: number;
  seconds: number;
}

/** Downloads a URL, counting lines and bytes; optionally keeps the body in a file. */
function fetchCount(url: string, headers: Record<string, string>, saveTo?: string): Promise<Run> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
        const file = saveTo ? fs.createWriteStream(saveTo) : null;
        let lines = 0;
        let bytes = 0;
        res.on('data', (b: Buffer) => {
          bytes += b.length;
          for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) lines++;
          if (file && !file.write(b)) {
            res.pause();
            file.once('drain', () => res.resume());
          }
        });
        res.on('error', reject);
        res.on('end', () => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          if (file) file.end(() => resolve({ lines, bytes, seconds }));
          else resolve({ lines, bytes, seconds });
        });
      })
      .on('error', reject);
  });
}

/**
 * The database floor (see the header): one COPY of the 1,000,000-event season's export rows to
 * psql, stdout to /dev/null. The league and season are this file's constants, never input.
 */
function pgFloor(databaseUrl: string): Promise<Run> {
  const copy = `copy (select seq, json_tail from events where season_id = 'xbl_2025' and tier = 'confirmed' order by seq) to stdout with (format binary)`;
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const out = fs.openSync('/dev/null', 'w');
    const psql = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', databaseUrl, '-c', copy], { stdio: ['ignore', out, 'inherit'] });
    psql.on('error', (e) => reject(new Error(`the database floor needs psql on PATH: ${e.message}`)));
    psql.on('exit', (code) => {
      fs.closeSync(out);
      if (code !== 0) return reject(new Error(`psql exited with ${code}`));
      resolve({ lines: 1_000_000, bytes: 0, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    });
  });
}

/** The run of median duration (the upper one of an even count): a typical run, where the best one flatters. */
const median = <R extends Run>(runs: R[]): R => [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)];

/**
 * `cached`: the plain export of the whole (closed) season, which the warm-up writes to the export
 * cache and the measured runs read from it. Otherwise `from=2000-01-01` (every event of the
 * season, the same bytes) keeps every run on the database path, as a first or filtered export is.
 */
async function measureExport(svc: ChildProcess, league: string, gzip: boolean, runs: number, cached: boolean, saveTo?: string, format = 'ndjson') {
  const url = `http://127.0.0.1:${PORT}/v1/export?league=${league}&season=2025${cached ? '' : '&from=2000-01-01'}${format === 'ndjson' ? '' : `&format=${format}`}`;
  const headers: Record<string, string> = { authorization: `Bearer ${BENCH_KEY}` };
  if (gzip) headers['accept-encoding'] = 'gzip';
  const pid = svc.pid ?? 0;
  await fetchCount(url, headers, saveTo); // warm-up (and the ceiling's file)
  const results: (Run & { peakMiB: number; cpu: number })[] = [];
  for (let i = 0; i < runs; i++) {
    const rss = sampleRss(pid);
    const cpu = cpuSeconds(pid);
    const r = await fetchCount(url, headers);
    results.push({ ...r, peakMiB: rss.stop(), cpu: cpuSeconds(pid) - cpu });
  }
  const b = median(results);
  return { ...b, peakMiB: Math.max(...results.map((r) => r.peakMiB)) };
}

/**
 * --formats: NDJSON, CSV and Parquet of each season on each path; rows/s is events ÷ seconds
 * (Parquet has no lines). The server's CPU-seconds (of the median run) show the cost apart from
 * the wall time, which on a VM shared with other work moves with the neighbours' load.
 */
async function formatsMain() {
  fs.mkdirSync(OUT, { recursive: true });
  const databaseUrl = await prepare();
  fs.rmSync(path.join(DATA_DIR, 'export-cache'), { recursive: true, force: true });
  const svc = await startSvc(PORT, { SVC_DATA_DIR: DATA_DIR, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}) });
  const rows: string[] = [];
  const verdicts: string[] = [];
  let idleMiB = 0;
  try {
    await new Promise((r) => setTimeout(r, 1000));
    idleMiB = rssKiB(svc.pid ?? 0) / 1024;
    for (const cached of FORMAT_PATHS) {
      for (const s of FORMAT_SIZES) {
        let ndjsonRate = 0;
        for (const format of FORMAT_LIST) {
          const m = await measureExport(svc, s.league, false, RUNS, cached, undefined, format);
          if (format === 'ndjson' && m.lines !== s.events) throw new Error(`${s.league}: ${m.lines} lines, expected ${s.events}`);
          if (format === 'csv' && m.lines !== s.events + 1) throw new Error(`${s.league} csv: ${m.lines} lines, expected ${s.events + 1}`);
          const rate = s.events / m.seconds;
          if (format === 'ndjson') ndjsonRate = rate;
          const ratio = rate / ndjsonRate;
          rows.push(
            `| ${fmt(s.events)} events, ${cached ? 'cached season file' : 'database'} | ${format} | ${fmt(rate)} | ${format === 'ndjson' ? '1' : fmt(ratio, 2)} | ${fmt(m.bytes / 1048576, 1)} MiB | ${fmt(m.seconds, 2)} s | ${fmt(m.cpu, 2)} s | ${fmt(m.peakMiB)} MiB | +${fmt(m.peakMiB - idleMiB)} MiB |`,
          );
          if (format !== 'ndjson' && s.events === 1_000_000) verdicts.push(`${format}, ${cached ? 'cached' : 'database'}: ${fmt(ratio, 2)} ${ratio >= 0.5 ? 'met' : 'NOT met'}`);
        }
      }
    }
  } finally {
    await stop(svc);
  }
  const out = [
    `bench/export --formats — ${PG ? 'PostgreSQL' : 'SQLite'}, median of ${RUNS} runs after a warm-up, identity encoding; server idle RSS ${fmt(idleMiB)} MiB`,
    '| export | format | rows/s | ÷ NDJSON | size | time | server CPU | server peak RSS | growth over idle |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `goal, 1,000,000 events, rows/s ≥ 0.5 of NDJSON's on the same path — ${verdicts.join('; ')}`,
  ].join('\n');
  process.stdout.write(`${out}\n`);
}

async function main() {
  if (FORMATS) return formatsMain();
  fs.mkdirSync(OUT, { recursive: true });
  const databaseUrl = await prepare();
  // Every run starts cold: the first plain export of a season reads the database and writes the cache.
  fs.rmSync(path.join(DATA_DIR, 'export-cache'), { recursive: true, force: true });
  const svc = await startSvc(PORT, { SVC_DATA_DIR: DATA_DIR, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}) });
  const file = path.join(OUT, 'export-1m.ndjson');
  const rows: string[] = [];
  let big: Awaited<ReturnType<typeof measureExport>> | undefined;
  const bigCached: Awaited<ReturnType<typeof measureExport>>[] = [];
  let idleMiB = 0;
  const peaks: number[] = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    idleMiB = rssKiB(svc.pid ?? 0) / 1024;
    for (const cached of [false, true]) {
      for (const s of SIZES) {
        const m = await measureExport(svc, s.league, false, RUNS, cached, s.events === 1_000_000 && !cached ? file : undefined);
        if (m.lines !== s.events) throw new Error(`${s.league}: ${m.lines} lines, expected ${s.events}`);
        if (s.events === 1_000_000 && cached) bigCached.push(m);
        else if (s.events === 1_000_000) big = m;
        peaks.push(m.peakMiB);
        rows.push(
          `| ${fmt(s.events)} events, ${cached ? 'cached season file' : 'database'} | ${fmt(m.lines / m.seconds)} | ${fmt(m.bytes / m.seconds / 1048576, 1)} MiB/s | ${fmt(m.bytes / 1048576, 1)} MiB | ${fmt(m.seconds, 2)} s | ${fmt(m.peakMiB)} MiB | +${fmt(m.peakMiB - idleMiB)} MiB |`,
        );
      }
    }
    const gz = await measureExport(svc, 'xbl', true, 1, true);
    peaks.push(gz.peakMiB);
    rows.push(`| 1,000,000 events, cached season file, gzip | ${fmt(1_000_000 / gz.seconds)} | ${fmt(gz.bytes / gz.seconds / 1048576, 1)} MiB/s (compressed) | ${fmt(gz.bytes / 1048576, 1)} MiB | ${fmt(gz.seconds, 2)} s | ${fmt(gz.peakMiB)} MiB | +${fmt(gz.peakMiB - idleMiB)} MiB |`);
  } finally {
    await stop(svc);
  }
  if (!big) throw new Error('no 1,000,000-event export measured');
  const ceilingServer = await startProcess(['bench/export-ceiling-server.ts', file, String(CEILING_PORT)], {}, /ready/);
  let ceiling: Run;
  try {
    await fetchCount(`http://127.0.0.1:${CEILING_PORT}/`, {});
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await fetchCount(`http://127.0.0.1:${CEILING_PORT}/`, {}));
    ceiling = median(runs);
  } finally {
    await stop(ceilingServer);
  }
  if (ceiling.bytes !== big.bytes) throw new Error(`ceiling served ${ceiling.bytes} bytes, the export ${big.bytes}`);
  let floor: Run | undefined;
  if (databaseUrl) {
    await pgFloor(databaseUrl); // warm-up: the same pages cached as for the export's runs
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await pgFloor(databaseUrl));
    floor = median(runs);
  }
  const ceilingRate = ceiling.bytes / ceiling.seconds;
  const verdict = (what: string, m: Run) => {
    const lps = m.lines / m.seconds;
    const ratio = m.bytes / m.seconds / ceilingRate;
    return `${what}: ≥ 300,000 lines/s: ${fmt(lps)} ${lps >= 300_000 ? 'met' : 'NOT met'}; ≥ 0.3 of the ceiling: ${fmt(ratio, 2)} ${ratio >= 0.3 ? 'met' : 'NOT met'}`;
  };
  const growth = Math.max(...peaks) - idleMiB;
  const out = [
    `bench/export — ${PG ? 'PostgreSQL 15' : 'SQLite'}, median of ${RUNS} runs after a warm-up, identity encoding unless noted; server idle RSS ${fmt(idleMiB)} MiB`,
    '| export | lines/s | bytes/s | size | time | server peak RSS | growth over idle |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    `| ceiling: same ${fmt(ceiling.bytes / 1048576, 1)} MiB from a file, bare node:http + fs.createReadStream | ${fmt(ceiling.lines / ceiling.seconds)} | ${fmt(ceiling.bytes / ceiling.seconds / 1048576, 1)} MiB/s | | ${fmt(ceiling.seconds, 2)} s | | |`,
    ...(floor
      ? [
          `| database floor: PostgreSQL alone, the 1,000,000 rows in one binary COPY to psql (discarded) | ${fmt(floor.lines / floor.seconds)} | | | ${fmt(floor.seconds, 2)} s | | |`,
          '',
          `1,000,000 events, database path ÷ the database floor: ${fmt(floor.seconds / big.seconds, 2)}; the floor ÷ the ceiling (the most any PostgreSQL client could reach here): ${fmt(ceiling.seconds / floor.seconds, 2)}`,
        ]
      : []),
    '',
    `goals, 1,000,000 events — ${verdict('database', big)}; ${bigCached[0] ? verdict('cached', bigCached[0]) : 'cached: not measured'}; RSS growth < 100 MB (largest of all rows): +${fmt(growth)} MiB ${growth * 1.048576 < 100 ? 'met' : 'NOT met'}`,
  ].join('\n');
  process.stdout.write(`${out}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
