// bench/consensus: crowd reports/s through batched POST /v1/reports (svc serve: auth, validation,
// ConsensusEngine, event append, report rows, on SQLite) against the engine alone in-process
// (bench/consensus-engine.ts) and a bare node:http server that only JSON-parses the same bodies.
// Run: node --import tsx bench/consensus.ts   (each run starts from a copy of the archive imported once into bench/.out/pristine)
// Knobs: BENCH_DURATION=10 (s measured, after BENCH_WARMUP=3 s)  BENCH_CLIENTS=4 (concurrent)
//        BENCH_REPORTERS=12 (keys)  BENCH_ENGINE=on|off (run bench/consensus-engine.ts)
//        BENCH_CPU_PROF=1 (V8 profile of svc into bench/.out/prof)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DATA, ROOT, fmt, resetBenchData, startProcess, stop } from './lib.js';
import { reporterKeys } from './reporter-keys.js';
import { percentile, startSvcForBench } from './stream-common.js';
import { gameCount, todaysBuckets, type Bucket } from './today.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const REPORTERS = Number(process.env.BENCH_REPORTERS ?? 12);
const RUN_ENGINE = (process.env.BENCH_ENGINE ?? 'on') !== 'off';
const BATCH = 500;
/** Plays in one (game, team, points) bucket are this far apart in observed time: never one candidate. */
const PLAY_SPACING_MS = 65_000;
/**
 * svc takes `observed_at` up to 6 hours back (docs/consensus.md): a bucket holds this many plays
 * spaced as above within it, 10 minutes spare. Past them the plays start again from the newest
 * slot, half a spacing later than the cycle before, so a run lasts as long as asked; a play of the
 * next cycle but one may then fall within the window of a candidate still in memory (2 min).
 */
const SLOTS_PER_CYCLE = Math.floor((6 * 3600_000 - 600_000) / PLAY_SPACING_MS);
const SVC_PORT = 18300;
const BARE_PORT = 18301;

const log = (line: string) => process.stderr.write(`[bench/consensus] ${line}\n`);

/**
 * Every reporter reports every play (so a play collects REPORTERS votes: a provisional on the
 * first, the confirmation once agreement reaches 0.6 of the game's active reporters), with a
 * few hundred ms of skew between reporters. Reporter r's batch b holds plays b·500 … b·500+499.
 */
class Plays {
  private readonly base = Date.now() - 60_000;
  /** Cycles through the 6 h window that the batches made so far have started. */
  cycles = 1;
  constructor(private readonly buckets: Bucket[]) {}
  batch(reporter: number, b: number): string {
    const reports = [];
    for (let p = b * BATCH; p < (b + 1) * BATCH; p++) {
      const bucket = this.buckets[p % this.buckets.length];
      const slot = Math.floor(p / this.buckets.length);
      const cycle = Math.floor(slot / SLOTS_PER_CYCLE);
      this.cycles = Math.max(this.cycles, cycle + 1);
      const observed = this.base + cycle * (PLAY_SPACING_MS / 2) - (slot % SLOTS_PER_CYCLE) * PLAY_SPACING_MS + (reporter % 5) * 300;
      reports.push({ ...bucket, observed_at: new Date(observed).toISOString() });
    }
    return JSON.stringify({ reports });
  }
}

interface LoadResult {
  reportsPerSecond: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  confirmedShare: number;
}

/** CLIENTS loops, each cycling through its share of the reporters' keys, for WARMUP_S + DURATION_S. */
async function load(url: string, keys: string[], plays: Plays, countTiers: boolean): Promise<LoadResult> {
  const started = performance.now();
  const measureFrom = started + WARMUP_S * 1000;
  const measureTo = measureFrom + DURATION_S * 1000;
  let requests = 0;
  let reports = 0;
  let confirmed = 0;
  let answered = 0;
  const latencies: number[] = [];
  const loop = async (j: number) => {
    const mine = keys.map((_, r) => r).filter((r) => r % CLIENTS === j);
    for (let b = 0; ; b++) {
      for (const r of mine) {
        const body = plays.batch(r, b);
        const t0 = performance.now();
        if (t0 >= measureTo) return;
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${keys[r]}`, 'content-type': 'application/json' }, body });
        const text = await res.text();
        if (res.status !== 202) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 500)}`);
        const t1 = performance.now();
        if (t0 >= measureFrom && t1 <= measureTo) {
          requests += 1;
          reports += BATCH;
          latencies.push(t1 - t0);
          if (countTiers) {
            const tiers = text.match(/"tier":"(provisional|confirmed)"/g) ?? [];
            answered += tiers.length;
            confirmed += tiers.filter((t) => t.includes('confirmed')).length;
          }
        }
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, j) => loop(j)));
  const sorted = Float64Array.from(latencies).sort();
  return {
    reportsPerSecond: reports / DURATION_S,
    requestsPerSecond: requests / DURATION_S,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    confirmedShare: answered > 0 ? confirmed / answered : NaN,
  };
}

/** Runs bench/consensus-engine.ts as its own process and keeps its printed lines. */
function engineBench(): Promise<{ lines: string[]; rate: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/consensus-engine.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => {
      const m = /engine\s*:\s*([\d,]+) reports\/s/.exec(out);
      if (code !== 0 || !m) reject(new Error(`bench/consensus-engine.ts exited ${code}: ${out}`));
      else resolve({ lines: out.trim().split('\n'), rate: Number(m[1].replace(/,/g, '')) });
    });
  });
}

async function main() {
  let engine: { lines: string[]; rate: number } | null = null;
  if (RUN_ENGINE) {
    log('bench/consensus-engine.ts (engine alone, in-process)');
    engine = await engineBench();
    for (const l of engine.lines) log(`  ${l}`);
  }

  log(`svc serve on ${SVC_PORT}, on a fresh copy of the imported archive (the first run imports it)`);
  await resetBenchData();
  const svc = await startSvcForBench(SVC_PORT);
  let svcResult: LoadResult;
  let buckets: Bucket[];
  let walMaxMb = 0;
  try {
    buckets = await todaysBuckets(`http://127.0.0.1:${SVC_PORT}`);
    const keys = await reporterKeys(REPORTERS, 'bench consensus reporter');
    log(`  ${REPORTERS} reporter keys, ${gameCount(buckets)} games today (${buckets.length} game/team/points buckets); ${CLIENTS} clients, ${WARMUP_S} s warm-up + ${DURATION_S} s`);
    // The WAL's size on disk through the load, every 100 ms (docs/operations.md: under 64 MB under any sustained write load).
    let walMax = 0;
    const walFile = path.join(BENCH_DATA, 'svc.db-wal');
    const sampler = setInterval(() => {
      try {
        walMax = Math.max(walMax, fs.statSync(walFile).size);
      } catch {
        // not there yet
      }
    }, 100);
    try {
      const plays = new Plays(buckets);
      svcResult = await load(`http://127.0.0.1:${SVC_PORT}/v1/reports`, keys, plays, true);
      log(`  the plays went ${plays.cycles} time(s) through the 6 h observed_at window; ${fmt(svcResult.confirmedShare * 100, 1)} % of reports answered confirmed`);
    } finally {
      clearInterval(sampler);
    }
    walMaxMb = walMax / 1024 / 1024;
    log(`  ${fmt(svcResult.reportsPerSecond)} reports/s, largest WAL ${fmt(walMaxMb, 1)} MB`);
  } finally {
    await stop(svc);
  }

  log(`bare node:http JSON-parsing server on ${BARE_PORT}`);
  const bare = await startProcess(['bench/consensus-bare.ts', String(BARE_PORT)], {}, /ready/);
  let bareResult: LoadResult;
  try {
    bareResult = await load(`http://127.0.0.1:${BARE_PORT}/`, Array.from({ length: REPORTERS }, () => 'unused'), new Plays(buckets), false);
    log(`  ${fmt(bareResult.reportsPerSecond)} reports/s`);
  } finally {
    await stop(bare);
  }

  const cpus = os.cpus();
  const row = (name: string, r: LoadResult) =>
    `| ${name} | ${fmt(r.requestsPerSecond, 1)} | **${fmt(r.reportsPerSecond)}** | ${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} | ${fmt(svcResult.reportsPerSecond / r.reportsPerSecond, 2)} |`;
  const out = [
    `bench/consensus — ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, SQLite; batches of ${BATCH} reports, ${CLIENTS} concurrent clients (fetch, keep-alive) in one process on the same machine, ${REPORTERS} reporter keys each reporting every play (${gameCount(buckets)} games today, ${buckets.length} game/team/points buckets), ${WARMUP_S} s warm-up + ${DURATION_S} s measured`,
    '',
    '| path | batches/s | reports/s | batch latency p50 / p99 ms | svc ÷ this |',
    '|---|---|---|---|---|',
    row('svc: POST /v1/reports (auth, validation, engine, event append, report rows)', svcResult),
    row('bare node:http: JSON.parse of the same bodies, 202', bareResult),
    ...(engine
      ? [`| ConsensusEngine alone, in-process (bench/consensus-engine.ts) | – | **${fmt(engine.rate)}** | – | ${fmt(svcResult.reportsPerSecond / engine.rate, 2)} |`]
      : []),
    '',
    `svc answered ${fmt(svcResult.confirmedShare * 100, 1)}% of the measured reports with tier "confirmed" (the rest joined or opened a provisional).`,
    `The SQLite WAL file was at most ${fmt(walMaxMb, 1)} MB during svc's load (sampled every 100 ms).`,
    ...(engine ? ['', 'bench/consensus-engine.ts printed:', '', ...engine.lines.map((l) => `    ${l}`)] : []),
  ].join('\n');
  process.stdout.write(`${out}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
