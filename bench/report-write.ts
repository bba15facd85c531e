// bench/report-write: what one crowd report writes on SQLite and what it costs the server. Each
// report opens a new candidate (the plan of bench/stream) and is POSTed alone, 5 ms after the
// previous one's answer; around each POST the WAL-index header says how many WAL frames its commit
// wrote (one per B-tree page it changed), and the frames' page numbers, mapped through `dbstat`,
// say which B-trees. Two schemas in alternating rounds of one run: the database as svc migrates
// it, and the baseline with the report indexes as they were before migration 0009 (every event in
// events_webhook_replay, every report in reports_key_ref). Server CPU from /proc, POST round trip
// from undici. No subscriber: bench/stream times the frame.
// Run: node --import tsx bench/report-write.ts   (BENCH_ROUNDS=3 BENCH_REPORTS=1000 BENCH_GAP_MS=5)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { request } from 'undici';
import { BENCH_DATA, fmt, resetBenchData, startSvc, stop } from './lib.js';
import { reporterKeys } from './reporter-keys.js';
import { cpuTimes, now, percentile, roundTripAgent } from './stream-common.js';
import { REPORT_KEYS, ReportPlan, todaysBuckets } from './today.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REPORTS = Number(process.env.BENCH_REPORTS ?? 1000);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 5);
const WARM = 200;
const PORT = 18600;
const DB_FILE = path.join(BENCH_DATA, 'svc.db');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Schema = 'migrated' | 'baseline';
const SCHEMA_LABEL: Record<Schema, string> = {
  migrated: 'as migrated (partial report indexes)',
  baseline: 'baseline: full events_webhook_replay and reports_key_ref',
};

/** The report indexes as migrations 0001 and 0002 made them. */
function useBaselineIndexes(): void {
  const db = new SQLite(DB_FILE);
  try {
    db.exec(`drop index events_webhook_replay; create index events_webhook_replay on events (tier, ts);
             drop index reports_key_ref; create unique index reports_key_ref on reports (key_id, ref);`);
  } finally {
    db.close();
  }
}

/**
 * The WAL as the writer left it: the WAL-index header's mxFrame (https://www.sqlite.org/walformat.html,
 * section 2: host byte order, at byte 16) and each frame's page number (the WAL file: a 32-byte
 * header, then per frame a 24-byte header, big-endian page number first, and the page).
 */
class WalReader {
  private readonly shm = fs.openSync(`${DB_FILE}-shm`, 'r');
  private readonly wal = fs.openSync(`${DB_FILE}-wal`, 'r');
  private readonly buf = Buffer.alloc(32);
  private readonly le = os.endianness() === 'LE';

  lastFrame(): number {
    fs.readSync(this.shm, this.buf, 0, 32, 0);
    if ((this.le ? this.buf.readUInt32LE(0) : this.buf.readUInt32BE(0)) !== 3007000) throw new Error('unexpected WAL-index version');
    return this.le ? this.buf.readUInt32LE(16) : this.buf.readUInt32BE(16);
  }

  /** Page numbers of frames first..last (1-based, inclusive). */
  pages(first: number, last: number): number[] {
    fs.readSync(this.wal, this.buf, 0, 32, 0);
    const pageSize = this.buf.readUInt32BE(8);
    const out: number[] = [];
    for (let f = first; f <= last; f++) {
      fs.readSync(this.wal, this.buf, 0, 4, 32 + (f - 1) * (24 + pageSize));
      out.push(this.buf.readUInt32BE(0));
    }
    return out;
  }

  close(): void {
    fs.closeSync(this.shm);
    fs.closeSync(this.wal);
  }
}

interface RoundResult {
  schema: Schema;
  round: number;
  /** Frames of each measured report whose commit did not start the WAL over. */
  frames: number[];
  /** B-tree name → pages written over the measured reports. */
  byTree: Map<string, number>;
  counted: number;
  rtt: Float64Array;
  cpuUserMs: number;
  cpuSystemMs: number;
}

async function post(base: string, key: string, body: string): Promise<void> {
  const res = await request(`${base}/v1/reports`, { dispatcher: roundTripAgent, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`POST /v1/reports: ${res.statusCode} ${text}`);
}

async function runRound(schema: Schema, round: number): Promise<RoundResult> {
  await resetBenchData();
  // Opening the store migrates it; the baseline's indexes replace the migrated ones after that.
  const keys = await reporterKeys(REPORT_KEYS, 'bench report-write reporter');
  if (schema === 'baseline') useBaselineIndexes();
  const svc = await startSvc(PORT);
  const base = `http://127.0.0.1:${PORT}`;
  const wal = new WalReader();
  try {
    const plan = new ReportPlan(await todaysBuckets(base), keys);
    for (let i = 0; i < WARM; i++) {
      const r = plan.next();
      await post(base, r.key, r.body);
      await sleep(GAP_MS);
    }
    const frames: number[] = [];
    const pages = new Map<number, number>();
    const rtt = new Float64Array(REPORTS);
    const cpu0 = cpuTimes(svc.pid);
    for (let i = 0; i < REPORTS; i++) {
      const r = plan.next();
      const before = wal.lastFrame();
      const t0 = now();
      await post(base, r.key, r.body);
      rtt[i] = now() - t0;
      const after = wal.lastFrame();
      // A commit after a completed checkpoint starts the WAL over: its frames are not after `before`.
      if (after > before) {
        frames.push(after - before);
        for (const p of wal.pages(before + 1, after)) pages.set(p, (pages.get(p) ?? 0) + 1);
      }
      await sleep(GAP_MS);
    }
    const cpu1 = cpuTimes(svc.pid);
    const reader = new SQLite(DB_FILE, { readonly: true });
    const byTree = new Map<string, number>();
    try {
      const owner = new Map<number, string>();
      for (const row of reader.prepare('select name, pageno from dbstat').iterate()) {
        if (typeof row === 'object' && row !== null && 'name' in row && 'pageno' in row) owner.set(Number(row.pageno), String(row.name));
      }
      for (const [page, n] of pages) {
        const name = page === 1 ? 'database header (page 1)' : (owner.get(page) ?? 'free or new page');
        byTree.set(name, (byTree.get(name) ?? 0) + n);
      }
    } finally {
      reader.close();
    }
    rtt.sort();
    return {
      schema,
      round,
      frames,
      byTree,
      counted: frames.length,
      rtt,
      cpuUserMs: ((cpu1.user - cpu0.user) * 1000) / REPORTS,
      cpuSystemMs: ((cpu1.system - cpu0.system) * 1000) / REPORTS,
    };
  } finally {
    wal.close();
    await stop(svc);
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const results: RoundResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which schema goes first, so neither always meets the warmer machine.
    const order: Schema[] = round % 2 === 1 ? ['baseline', 'migrated'] : ['migrated', 'baseline'];
    for (const schema of order) {
      process.stderr.write(`[bench/report-write] round ${round}, ${schema}\n`);
      results.push(await runRound(schema, round));
    }
  }
  const lines = [
    `bench/report-write — ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, SQLite; ${fmt(REPORTS)} reports per round after ${WARM} unmeasured, each POSTed alone ${GAP_MS} ms after the previous answer, each opening a new candidate`,
    '',
    '| round | schema | reports counted | WAL frames per report, mean / median | server CPU per report, user / kernel ms | POST p50 / p99 ms |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.round} | ${SCHEMA_LABEL[r.schema]} | ${fmt(r.counted)} | ${fmt(mean(r.frames), 2)} / ${fmt(median(r.frames))} | ${fmt(r.cpuUserMs, 3)} / ${fmt(r.cpuSystemMs, 3)} | ${fmt(percentile(r.rtt, 50), 2)} / ${fmt(percentile(r.rtt, 99), 2)} |`,
    ),
    '',
  ];
  const schemas: Schema[] = ['baseline', 'migrated'];
  const of = (s: Schema) => results.filter((r) => r.schema === s);
  const medianOf = (s: Schema, f: (r: RoundResult) => number) => median(of(s).map(f));
  const framesPer = (r: RoundResult) => mean(r.frames);
  const cpuPer = (r: RoundResult) => r.cpuUserMs + r.cpuSystemMs;
  lines.push(
    `Medians over the rounds: WAL frames per report ${schemas.map((s) => `${s} ${fmt(medianOf(s, framesPer), 2)}`).join(', ')} (ratio ${fmt(medianOf('migrated', framesPer) / medianOf('baseline', framesPer), 3)}); ` +
      `server CPU per report ${schemas.map((s) => `${s} ${fmt(medianOf(s, cpuPer), 3)} ms`).join(', ')} (ratio ${fmt(medianOf('migrated', cpuPer) / medianOf('baseline', cpuPer), 3)}); ` +
      `POST p50 ${schemas.map((s) => `${s} ${fmt(medianOf(s, (r) => percentile(r.rtt, 50)), 2)} ms`).join(', ')}.`,
    '',
    'Pages written per report by B-tree (all rounds of each schema):',
    '',
    `| B-tree | ${schemas.map((s) => SCHEMA_LABEL[s]).join(' | ')} |`,
    `|---|${schemas.map(() => '---').join('|')}|`,
  );
  const per = new Map<string, Map<Schema, number>>();
  for (const s of schemas) {
    const counted = of(s).reduce((a, r) => a + r.counted, 0);
    for (const r of of(s)) {
      for (const [name, n] of r.byTree) {
        const m = per.get(name) ?? new Map<Schema, number>();
        m.set(s, (m.get(s) ?? 0) + n / counted);
        per.set(name, m);
      }
    }
  }
  for (const [name, m] of [...per].sort((a, b) => (b[1].get('baseline') ?? 0) - (a[1].get('baseline') ?? 0))) {
    lines.push(`| ${name} | ${schemas.map((s) => fmt(m.get(s) ?? 0, 2)).join(' | ')} |`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

await main();
