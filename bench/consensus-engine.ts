// bench/consensus-engine: ConsensusEngine throughput in-process, against a bare loop that only
// inserts the same reports into a Map (the floor for "touch every report once"), and against the
// engine before the crowd-trust rules (bench/trust-baseline) on the same reports.
// Run: node --import tsx bench/consensus-engine.ts   (BENCH_REPORTS=500000 BENCH_GAMES=200 BENCH_RUNS=5)
import { performance } from 'node:perf_hooks';
import { ManualClock, ConsensusEngine, type ReportIn } from '@svc/server';
import { fmt } from './lib.js';
import { ConsensusEngine as TodayEngine } from './trust-baseline/engine.js';

const REPORTS = Number(process.env.BENCH_REPORTS ?? 500_000);
const GAMES = Number(process.env.BENCH_GAMES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const REPORTERS_PER_GAME = 12;
const T0 = Date.parse('2026-06-11T12:00:00.000Z');

/** Seeded PRNG (mulberry32) so every run and every machine replays the same stream. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A busy afternoon: every game scores every ~20 s (far above real sports, so candidates overlap);
 * ~80% of a game's reporters report each play with ±3 s of observation skew and up to 4 s of delay,
 * 10% of them send the report twice, and 5% of reports are wrong (other team or points).
 */
function generate(): ReportIn[] {
  const rand = rng(42);
  const out: ReportIn[] = [];
  let t = T0;
  while (out.length < REPORTS) {
    t += Math.round(20_000 / GAMES);
    const game = Math.floor(rand() * GAMES);
    for (let r = 0; r < REPORTERS_PER_GAME && out.length < REPORTS; r++) {
      if (rand() > 0.8) continue;
      const wrong = rand() < 0.05;
      const report: ReportIn = {
        reporterId: `rep_${game}_${r}`,
        gameId: `soccer_${game}`,
        team: wrong && rand() < 0.5 ? 'AWAY' : 'HOME',
        points: wrong ? 2 : 1,
        observedAt: t + Math.round((rand() - 0.5) * 6_000),
        receivedAt: t + Math.round(rand() * 4_000),
      };
      out.push(report);
      if (rand() < 0.1) out.push({ ...report, receivedAt: report.receivedAt + 500 });
    }
  }
  // Arrival order: the engine sees reports when they are received.
  return out.sort((a, b) => a.receivedAt - b.receivedAt);
}

function runEngine(reports: ReportIn[], today = false) {
  const clock = new ManualClock(reports[0].receivedAt);
  const engine = today ? new TodayEngine(clock) : new ConsensusEngine(clock);
  const counts = { provisional: 0, confirmed: 0, retracted: 0, duplicate: 0 };
  let nextTick = clock.now() + 1_000;
  let peakCandidates = 0;
  const start = performance.now();
  for (const r of reports) {
    // The worker ticks every second of (simulated) time.
    while (r.receivedAt >= nextTick) {
      clock.set(nextTick);
      for (const o of engine.tick()) counts[o.kind] += 1;
      nextTick += 1_000;
      if (nextTick % 60_000 < 1_000) peakCandidates = Math.max(peakCandidates, engine.size().candidates);
    }
    clock.set(r.receivedAt);
    const res = engine.submit(r);
    if (res.duplicate) counts.duplicate += 1;
    for (const o of res.outcomes) counts[o.kind] += 1;
  }
  const ms = performance.now() - start;
  return { ms, counts, peakCandidates, simulatedS: (clock.now() - reports[0].receivedAt) / 1000 };
}

function runBaseline(reports: ReportIn[]) {
  const map = new Map<string, ReportIn>();
  const start = performance.now();
  for (const r of reports) map.set(`${r.gameId}|${r.reporterId}|${r.team}|${r.points}|${r.observedAt}`, r);
  const ms = performance.now() - start;
  return { ms, size: map.size };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const reports = generate();
console.log(`consensus-engine: ${fmt(reports.length)} reports, ${GAMES} games × ${REPORTERS_PER_GAME} reporters, ${RUNS} runs (+1 warm-up), median shown`);
runEngine(reports);
runEngine(reports, true);
runBaseline(reports);
const engineMs: number[] = [];
const todayMs: number[] = [];
const baseMs: number[] = [];
let last = runEngine(reports);
for (let i = 0; i < RUNS; i++) {
  last = runEngine(reports);
  engineMs.push(last.ms);
  todayMs.push(runEngine(reports, true).ms);
  baseMs.push(runBaseline(reports).ms);
}
const engineRate = reports.length / (median(engineMs) / 1000);
const todayRate = reports.length / (median(todayMs) / 1000);
const baseRate = reports.length / (median(baseMs) / 1000);
const c = last.counts;
console.log(`outcomes: ${fmt(c.provisional)} provisional, ${fmt(c.confirmed)} confirmed, ${fmt(c.retracted)} retracted, ${fmt(c.duplicate)} duplicates; ${fmt(last.simulatedS)} s simulated, peak ${fmt(last.peakCandidates)} candidates held`);
console.log(`engine   : ${fmt(engineRate)} reports/s  (${fmt(median(engineMs), 1)} ms, submit + tick every simulated second)`);
console.log(`today's  : ${fmt(todayRate)} reports/s  (${fmt(median(todayMs), 1)} ms, the engine before the crowd-trust rules, bench/trust-baseline)`);
console.log(`baseline : ${fmt(baseRate)} reports/s  (${fmt(median(baseMs), 1)} ms, Map.set with a composite key)`);
console.log(`ratio    : engine takes ${fmt(baseRate / engineRate, 2)}× the baseline's time per report, ${fmt(todayRate / engineRate, 2)}× today's engine's`);
console.log(`goal     : ≥ 100,000 reports/s → ${engineRate >= 100_000 ? 'met' : 'NOT met'}`);
