// bench/trust: crowd trust under attack (docs/consensus.md "Threat model", bench/RESULTS.md).
// Replays the real World Cup goals (2014, 2018, 2022) with honest crowds of 3, 6, 12 and 24 and
// each attack from one attacker to as many as there are honest reporters (and twice that, where
// the attackers outnumber them), through today's rules (bench/trust-baseline, a verbatim copy of
// the engine before the crowd-trust rules) and the current engine, in process on a manual clock,
// and prints one table: each metric of the current rules beside today's on the same input.
//
// Run:  node --import tsx bench/trust.ts                  (BENCH_SEED=2; BENCH_CROWDS=3,6,12,24; BENCH_ATTACKS=…)
//       node --import tsx bench/trust.ts --fit            (fits the probability's calibration on seed 1)
//       node --import tsx bench/trust.ts --app            (report completing the quorum → confirmed frame, one node)
//       BENCH_MODEL=laplace|equal node --import tsx bench/trust.ts   (the weight models docs/decisions.md compares)
import { performance } from 'node:perf_hooks';
import { CALIBRATION, type Calibration, type ConsensusOptions } from '@svc/server';
import { fmt } from './lib.js';
import { calibration, fit, merge, quantile, runScenarios, type Metrics, type Row, type RunOptions, type WeightModel } from './trust-run.js';
import { ATTACKS, worldCupMatches, type Attack } from './trust-world.js';

const SEED = Number(process.env.BENCH_SEED ?? 2);
const FIT_SEED = 1;
const CROWDS = (process.env.BENCH_CROWDS ?? '3,6,12,24').split(',').map(Number);
const ATTACK_LIST = (process.env.BENCH_ATTACKS ?? ATTACKS.join(',')).split(',').filter((a): a is Attack => (ATTACKS as readonly string[]).includes(a));
const MODEL: WeightModel = process.env.BENCH_MODEL === 'laplace' || process.env.BENCH_MODEL === 'equal' ? process.env.BENCH_MODEL : 'official';
/** BENCH_OPTIONS='{"presenceAgreement":0.55}' tries other consensus options on the same input. */
const OPTIONS = process.env.BENCH_OPTIONS ? (JSON.parse(process.env.BENCH_OPTIONS) as Partial<ConsensusOptions>) : {};
const per1000 = (n: number, of: number) => (of > 0 ? (1000 * n) / of : NaN);
const f1 = (x: number) => (Number.isNaN(x) ? '–' : fmt(x, 1));
const f2 = (x: number) => (Number.isNaN(x) ? '–' : fmt(x, 2));
const f3 = (x: number) => (Number.isNaN(x) ? '–' : fmt(x, 3));
const pct = (a: number, b: number) => (b > 0 ? `${fmt((100 * a) / b, 1)} %` : '–');

const HEAD = [
  'attack',
  'honest',
  'attempts: honest present ≥ attackers · outnumbered',
  'invented confirmed /1000, honest ≥ attackers: now · today',
  'outnumbered: now · today',
  'highest p of those, and how many ≥ 0.9 (now)',
  'ghost visible s p50 / p99 (≥ 2 others): now · today',
  'real confirmed by the crowd (≥ 3 honest saw): now · today',
  'confirmed s after first honest report p50 / p99: now · today',
  'ECE: probability · agreement now · today',
  'Brier: probability · agreement now · today',
];

function printRow(label: string, honest: string, now: Metrics, today: Metrics): void {
  const cp = calibration(now.probabilityPairs);
  const ca = calibration(now.agreementPairs);
  const ct = calibration(today.agreementPairs);
  const g = (m: Metrics) => `${f1(quantile(m.ghostVisibleS, 0.5))} / ${f1(quantile(m.ghostVisibleS, 0.99))}`;
  const l = (m: Metrics) => `${f1(quantile(m.latencyS, 0.5))} / ${f1(quantile(m.latencyS, 0.99))}`;
  const cells = [
    label,
    honest,
    `${fmt(now.attemptsWithin)} · ${fmt(now.attemptsOut)}`,
    `${f2(per1000(now.inventedWithin, now.attemptsWithin))} · ${f2(per1000(today.inventedWithin, today.attemptsWithin))}`,
    `${f2(per1000(now.inventedOut, now.attemptsOut))} · ${f2(per1000(today.inventedOut, today.attemptsOut))}`,
    now.inventedOut > 0 ? `${f3(now.maxInventedP)}, ${fmt(now.sureInventedOut)}` : '–',
    `${g(now)} · ${g(today)}`,
    `${pct(now.realCrowdConfirmed, now.realSeen)} · ${pct(today.realCrowdConfirmed, today.realSeen)}`,
    `${l(now)} · ${l(today)}`,
    `${f3(cp.ece)} · ${f3(ca.ece)} · ${f3(ct.ece)}`,
    `${f3(cp.brier)} · ${f3(ca.brier)} · ${f3(ct.brier)}`,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}

function printTable(rows: Row[]): void {
  console.log(`| ${HEAD.join(' | ')} |`);
  console.log(`|${HEAD.map(() => '---').join('|')}|`);
  for (const r of rows) printRow(r.attack, String(r.honest), r.now, r.today);
  printRow('**all**', CROWDS.join(', '), merge(rows.map((r) => r.now)), merge(rows.map((r) => r.today)));
}

function targets(rows: Row[]): void {
  const now = merge(rows.map((r) => r.now));
  const today = merge(rows.map((r) => r.today));
  const cp = calibration(now.probabilityPairs);
  const ca = calibration(now.agreementPairs);
  const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const flood = (side: 'now' | 'today') => merge(rows.filter((r) => r.attack === 'flood').map((r) => r[side]));
  console.log('');
  console.log(`targets (seed ${SEED}, model ${MODEL}):`);
  console.log(`- invented scores confirmed where the honest reporters present are at least as many as the attackers: ${now.inventedWithin} in ${fmt(now.attemptsWithin)} attempts (today ${today.inventedWithin}) → ${mark(now.inventedWithin === 0 && now.attemptsWithin >= 3000)}`);
  console.log(`- attackers outnumbering the honest present (none present included): ${now.inventedOut} confirmed in ${fmt(now.attemptsOut)} attempts (today ${today.inventedOut}), highest probability ${now.inventedOut > 0 ? f3(now.maxInventedP) : '–'}, ${now.sureInventedOut} at 0.9 or more → ${mark(now.inventedOut === 0 || now.maxInventedP < 0.9)}`);
  for (const attack of ATTACK_LIST) {
    const a = merge(rows.filter((r) => r.attack === attack).map((r) => r.now));
    console.log(`  ${attack}: ${a.inventedOut} confirmed of ${fmt(a.attemptsOut)} outnumbered attempts, ${a.sureInventedOut} at probability ≥ 0.9`);
  }
  console.log(`- ghost provisional visible with ≥ 2 others present: p50 ${f1(quantile(now.ghostVisibleS, 0.5))} s, p99 ${f1(quantile(now.ghostVisibleS, 0.99))} s over ${fmt(now.ghostVisibleS.length)} (today ${f1(quantile(today.ghostVisibleS, 0.99))} s over ${fmt(today.ghostVisibleS.length)}) → ${mark(quantile(now.ghostVisibleS, 0.99) <= 30)}`);
  console.log(`- real scores confirmed by the crowd where ≥ 3 honest saw them: ${pct(now.realCrowdConfirmed, now.realSeen)} (today ${pct(today.realCrowdConfirmed, today.realSeen)}) → ${mark(now.realCrowdConfirmed >= 0.99 * now.realSeen)}`);
  const [n50, n99, t50, t99] = [quantile(now.latencyS, 0.5), quantile(now.latencyS, 0.99), quantile(today.latencyS, 0.5), quantile(today.latencyS, 0.99)];
  console.log(`- confirmation from the first honest report p50 / p99: ${f1(n50)} / ${f1(n99)} s (today ${f1(t50)} / ${f1(t99)} s) → ${mark(n50 <= t50 && n99 <= t99)}`);
  console.log(`- probability ECE ${f3(cp.ece)} (≤ 0.02) over ${fmt(cp.n)} published events, Brier ${f3(cp.brier)} against agreement's ${f3(ca.brier)} → ${mark(cp.ece <= 0.02 && cp.brier < ca.brier)}`);
  console.log(`- flood: provisionals published per flood report ${pct(flood('now').floodPublished, flood('now').floodReports)} (today ${pct(flood('today').floodPublished, flood('today').floodReports)})`);
}

const runOptions = (seed: number, c: Calibration): RunOptions => ({ seed, crowds: CROWDS, attacks: ATTACK_LIST, calibration: c, model: MODEL, options: OPTIONS });

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  if (args.has('--app')) {
    const { runApp } = await import('./trust-app.js');
    await runApp();
    return;
  }
  if (args.has('--fit')) {
    const t0 = performance.now();
    const rows = runScenarios(runOptions(FIT_SEED, CALIBRATION));
    const features = rows.flatMap((r) => r.now.features);
    const c = fit(features);
    console.log(`fitted on seed ${FIT_SEED}, ${fmt(features.length)} published events (${fmt((performance.now() - t0) / 1000, 1)} s):`);
    console.log(JSON.stringify(c));
    return;
  }
  const t0 = performance.now();
  // BENCH_CALIBRATION='{"bias":…,"voteScale":…,"silenceScale":…}' measures a calibration before it is adopted.
  const calibrationIn: Calibration = process.env.BENCH_CALIBRATION ? { ...CALIBRATION, ...(JSON.parse(process.env.BENCH_CALIBRATION) as Partial<Calibration>) } : CALIBRATION;
  if (process.env.BENCH_CALIBRATION) console.log(`calibration from BENCH_CALIBRATION: ${JSON.stringify(calibrationIn)}`);
  const rows = runScenarios(runOptions(SEED, calibrationIn));
  const s = (performance.now() - t0) / 1000;
  console.log(`bench/trust: World Cups 2014, 2018, 2022 (${worldCupMatches(SEED).length} matches, ${worldCupMatches(SEED).reduce((n, m) => n + m.goals.length, 0)} goals); honest crowds ${CROWDS.join(', ')}; attackers 1, H/2, H and 2H; seed ${SEED}; ${fmt(s, 1)} s`);
  console.log('');
  printTable(rows);
  targets(rows);
}

await main();
