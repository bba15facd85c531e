// bench/consensus-owner: what owning each game's consensus on one node costs a report, against
// the single node and against PostgreSQL's own floor, sampled in turn so every path sees the same
// machine. Times POST /v1/reports sent → the provisional event's frame received on a stream client,
// one report at a time, each report opening a new candidate, on real `svc serve` processes,
// compiled as users run them (`npm run build` first). Every process runs for the whole bench; each
// round takes one sample of every path, in an order drawn anew each round, BENCH_GAP_MS (5) apart:
//   single   one node on SQLite (the default deployment);
//   owner    two nodes on PostgreSQL + Redis, reports posted to the node that owns the games;
//   forward  the same two nodes, reports posted to the other node (routed to the owner);
//   floor    PostgreSQL alone, the smallest durable write a report could make (BEGIN; one row;
//            COMMIT, one message on one connection of `pg`): what the cluster's path can at best
//            cost over one node's.
// Optional paths (BENCH_PATHS): nosync, the floor without the commit's flush (a diagnosis: svc
// keeps the flush); sqlite, the same transaction on SQLite as the single node opens it;
// owner-before and forward-before, the same two paths on two more nodes that run another build
// (BENCH_BEFORE: the root of a copy of an earlier commit, built, with this tree's node_modules),
// on a database and Redis prefix of their own: a change measured against the code before it in
// the same rounds (owner − owner-before per round).
// Each path's p50 / p99, then the paired figures: per round owner − single − floor, forward − owner,
// and their medians over the rounds. The stream client is on the node the reports are posted to.
// PostgreSQL and Redis are the bench's own (bench/cluster-parts.ts Backends), so other users of
// the machine's databases are not in the figures; BENCH_PG=shared takes SVC_TEST_PG_URL and
// SVC_TEST_REDIS_URL (or the local defaults) instead. With the bench's own PostgreSQL, its
// pg_stat_statements gives each statement's calls and execution time per report of the cluster.
// Run: npm run build && node --import tsx bench/consensus-owner.ts
//   (BENCH_ROUNDS=400 BENCH_GAP_MS=5 BENCH_PATHS=single,owner,forward,floor)
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { request } from 'undici';
import WebSocket from 'ws';
import { keyPrefix, loadConfig, openDb, KeyRepo } from '@svc/server';
import { Backends, cpuOf, freePort, startNode } from './cluster-parts.js';
import { BENCH_DATA, BENCH_KEY, fmt, resetBenchData, stop } from './lib.js';
import { now, percentile, roundTripAgent } from './stream-common.js';
import { spacedObservations, todaysBuckets, type Bucket } from './today.js';

const BEFORE = process.env.BENCH_BEFORE ?? null;
const PATHS = (process.env.BENCH_PATHS ?? (BEFORE ? 'single,owner,owner-before,floor' : 'single,owner,forward,floor')).split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? process.env.BENCH_LATENCY_SAMPLES ?? 400);
const WARMUP = 50;
// 0 sends each sample as soon as the previous one is in: every process stays awake, so what is
// left is svc's own work, without the machine's wake-ups from idle (bench/RESULTS.md).
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 5);
/** One voice has at most 2 open candidates per game nobody else backs (docs/consensus.md "Flood"): keys to spread the lone reports over. */
const KEYS = 32;
/**
 * Rounds one set of keys reports: every report opens a candidate nobody else supports, which the
 * ghost-score rule retracts once the game's other active reporters stayed silent long enough
 * (10–30 s here: the bench's other keys are those reporters), and a fourth retraction lowers its
 * key's record below what may publish a provisional alone (docs/consensus.md "Ghost scores"). A
 * new set of keys takes over before that: 150 rounds last 5–15 s. Fewer keys than that, and a
 * key's first report on a node (its authentication and track record read) is in many samples.
 */
const ROUNDS_PER_KEYS = 150;
/** The round being sampled: the plans take their keys from its set. */
let currentRound = 0;
/** A sample that waits this long for its frame fails the run rather than hanging it. */
const FRAME_TIMEOUT_MS = 15_000;
const SHARED = process.env.BENCH_PG === 'shared';

const log = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Key sets for the rounds in turn (ROUNDS_PER_KEYS each), and one key that only takes the games. */
async function makeKeys(databaseUrl: string | null): Promise<{ sets: string[][]; claimer: string }> {
  const config = loadConfig({ SVC_DATA_DIR: BENCH_DATA, SVC_SIMULATOR: 'off', SVC_DATABASE_URL: databaseUrl ?? '' });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const sets: string[][] = [];
    for (let g = 0; g < Math.ceil((WARMUP + ROUNDS) / ROUNDS_PER_KEYS); g++) {
      const keys: string[] = [];
      for (let i = 0; i < KEYS; i++) keys.push((await repo.create({ name: `bench owner ${g}.${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key);
      sets.push(keys);
    }
    const claimer = (await repo.create({ name: 'bench owner claims', plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key;
    return { sets, claimer };
  } finally {
    await db.close();
  }
}

type Plan = () => { key: string; bucket: Bucket; body: string };

/**
 * Each report opens a new candidate: buckets in turn, observed times 31 s apart, and each
 * bucket's reports from the keys of the round's set in turn, each key at most twice per game
 * (the consensus lets one voice have two lone candidates open there).
 */
function plan(buckets: Bucket[], sets: string[][]): Plan {
  const next = spacedObservations(buckets);
  const used = new Map<string, number[]>();
  return () => {
    const { bucket, turn, slot, body } = next();
    const set = Math.min(sets.length - 1, Math.floor(currentRound / ROUNDS_PER_KEYS));
    const keys = sets[set];
    let counts = used.get(`${set}/${bucket.game_id}`);
    if (!counts) used.set(`${set}/${bucket.game_id}`, (counts = new Array<number>(keys.length).fill(0)));
    for (let i = 0; i < keys.length; i++) {
      const k = ((turn % buckets.length) + slot + i) % keys.length;
      if (counts[k] >= 2) continue;
      counts[k] += 1;
      return { key: keys[k], bucket, body };
    }
    throw new Error(`more than ${keys.length * 2} reports for game ${bucket.game_id} in one round set; add keys`);
  };
}

/** A stream client on one node, and a report path through it: one call, one sample (ms). */
async function reportPath(post: string, stream: string, next: Plan): Promise<{ sample: () => Promise<number>; close: () => void }> {
  const ws = new WebSocket(`${stream}/v1/stream`, { headers: { authorization: `Bearer ${BENCH_KEY}` }, perMessageDeflate: false });
  let onFrame: ((e: Record<string, unknown>) => void) | null = null;
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data: WebSocket.RawData) => {
      const m: Record<string, unknown> = JSON.parse(String(data));
      if ('id' in m) onFrame?.(m);
      else resolve();
    });
    ws.once('error', reject);
  });
  return {
    sample: async () => {
      const r = next();
      // Only this report's provisional counts (a shared Redis may carry others' events).
      let answer = '(no answer yet)';
      const arrived = new Promise<number>((resolve, reject) => {
        const late = setTimeout(() => reject(new Error(`no provisional frame for ${r.body} posted to ${post} within ${FRAME_TIMEOUT_MS} ms; answered ${answer}`)), FRAME_TIMEOUT_MS);
        onFrame = (e) => {
          if (e.tier === 'provisional' && e.game_id === r.bucket.game_id && e.team === r.bucket.team && e.points === r.bucket.points) {
            clearTimeout(late);
            resolve(now());
          }
        };
      });
      const t0 = now();
      const res = await request(`${post}/v1/reports`, { dispatcher: roundTripAgent, method: 'POST', headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' }, body: r.body });
      const text = await res.body.text();
      answer = `${res.statusCode} ${text}`;
      if (res.statusCode !== 202) throw new Error(`POST /v1/reports: ${res.statusCode} ${text}`);
      return (await arrived) - t0;
    },
    close: () => ws.terminate(),
  };
}

const FLOOR_TABLE = 'create table floor_events (id integer primary key, game_id text not null, body text not null)';
const FLOOR_BODY = 'x'.repeat(600);

/** PostgreSQL alone: the smallest transaction a report's write could be, one message on one connection. */
async function pgFloor(url: string, flush: boolean): Promise<{ sample: () => Promise<number>; close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`${FLOOR_TABLE.replace('integer primary key', 'bigserial primary key')}`.replace('floor_events', `floor_events_${flush ? 'd' : 'n'}`));
  await client.query(`create index on floor_events_${flush ? 'd' : 'n'} (game_id)`);
  await client.query(`prepare floor_insert as insert into floor_events_${flush ? 'd' : 'n'} (game_id, body) values ($1, $2)`);
  const insert = `execute floor_insert('g1', '${FLOOR_BODY}')`;
  const text = flush ? `begin; ${insert}; commit` : `begin; set local synchronous_commit = off; ${insert}; commit`;
  return {
    sample: async () => {
      const t0 = now();
      await client.query(text);
      return now() - t0;
    },
    close: () => client.end(),
  };
}

/** SQLite alone, opened as store/sql/db.ts opens the single node's file (WAL, synchronous NORMAL). */
function sqliteFloor(): { sample: () => Promise<number>; close: () => Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-floor-'));
  const db = new SQLite(path.join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(FLOOR_TABLE);
  db.exec('create index floor_game on floor_events (game_id)');
  const begin = db.prepare('begin');
  const put = db.prepare('insert into floor_events (game_id, body) values (?, ?)');
  const commit = db.prepare('commit');
  return {
    sample: async () => {
      const t0 = now();
      begin.run();
      put.run('g1', FLOOR_BODY);
      commit.run();
      return now() - t0;
    },
    close: async () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const LABEL: Record<string, string> = {
  single: 'single node, SQLite',
  owner: 'two nodes, PostgreSQL + Redis, posted to the owner',
  forward: 'two nodes, PostgreSQL + Redis, posted to the other node',
  'owner-before': `the same, posted to the owner, on the build before (${BEFORE ?? ''})`,
  'forward-before': `the same, posted to the other node, on the build before (${BEFORE ?? ''})`,
  floor: 'PostgreSQL alone: BEGIN; one row; COMMIT (one message)',
  nosync: 'the same without the commit\'s flush (synchronous_commit off)',
  sqlite: 'SQLite alone: BEGIN; one row; COMMIT (WAL, synchronous NORMAL)',
};

type Latency = { p50: number; p99: number; max: number };

function latency(samples: readonly number[]): Latency {
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

const median = (xs: readonly number[]): number => percentile(Float64Array.from(xs).sort(), 50);

/** The same seeded sequence of orders in every run (mulberry32). */
let seed = 0x5eed;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function main(): Promise<void> {
  await resetBenchData();
  const backends = SHARED ? null : await Backends.start();
  const adminUrl = backends?.adminUrl ?? process.env.SVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = backends?.redisUrl ?? process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const stamp = Date.now();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const databases = [`svc_bench_owner_${stamp}`, `svc_bench_floor_${stamp}`, `svc_bench_before_${stamp}`];
  for (const d of databases) await admin.query(`CREATE DATABASE ${d}`);
  const urlOf = (d: string) => {
    const u = new URL(adminUrl);
    u.pathname = `/${d}`;
    return u.toString();
  };
  const [clusterUrl, floorUrl, beforeUrl] = databases.map(urlOf);
  const nodes: ChildProcess[] = [];
  const closers: (() => unknown)[] = [];
  const paths = new Map<string, () => Promise<number>>();
  try {
    const wanted = new Set(PATHS);
    if (wanted.has('single')) {
      const port = await freePort();
      nodes.push(await startNode(port, {}));
      const base = `http://127.0.0.1:${port}`;
      const p = await reportPath(base, `ws://127.0.0.1:${port}`, plan(await todaysBuckets(base), (await makeKeys(null)).sets));
      closers.push(p.close);
      paths.set('single', p.sample);
    }
    /** Two nodes of one build on one database: node A owns every game; the owner and forward paths through them. */
    const cluster = async (databaseUrl: string, root: string | undefined, prefix: string, suffix: string) => {
      if (!wanted.has(`owner${suffix}`) && !wanted.has(`forward${suffix}`)) return;
      if (backends) {
        const probe = new pg.Client({ connectionString: databaseUrl });
        await probe.connect();
        await probe.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
        await probe.end();
      }
      const env = { SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redisUrl, SVC_REDIS_PREFIX: prefix };
      const [portA, portB] = [await freePort(), await freePort()];
      nodes.push(await startNode(portA, { ...env, SVC_NODE_ID: `a${suffix}` }, root));
      nodes.push(await startNode(portB, { ...env, SVC_NODE_ID: `b${suffix}` }, root));
      const keys = await makeKeys(databaseUrl);
      const a = `http://127.0.0.1:${portA}`;
      const buckets = await todaysBuckets(a);
      // Node A takes every game first, so it owns them all for the rest of the run.
      for (const bucket of buckets) {
        const res = await request(`${a}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${keys.claimer}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...bucket, observed_at: new Date(Date.now() - 3_600_000).toISOString() }) });
        await res.body.text();
      }
      const next = plan(buckets, keys.sets);
      if (wanted.has(`owner${suffix}`)) {
        const p = await reportPath(a, `ws://127.0.0.1:${portA}`, next);
        closers.push(p.close);
        paths.set(`owner${suffix}`, p.sample);
      }
      if (wanted.has(`forward${suffix}`)) {
        const p = await reportPath(`http://127.0.0.1:${portB}`, `ws://127.0.0.1:${portB}`, next);
        closers.push(p.close);
        paths.set(`forward${suffix}`, p.sample);
      }
    };
    await cluster(clusterUrl, undefined, 'svc:', '');
    if (BEFORE) await cluster(beforeUrl, BEFORE, 'before:', '-before');
    for (const [name, flush] of [['floor', true], ['nosync', false]] as const) {
      if (!wanted.has(name)) continue;
      const f = await pgFloor(floorUrl, flush);
      closers.push(f.close);
      paths.set(name, f.sample);
    }
    if (wanted.has('sqlite')) {
      const f = sqliteFloor();
      closers.push(f.close);
      paths.set('sqlite', f.sample);
    }
    const order = PATHS.filter((p) => paths.has(p));
    const samples = new Map(order.map((p) => [p, [] as number[]]));
    const cpu0 = nodes.map((n) => cpuOf(n.pid ?? 0));
    const load0 = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    let statementsAt = 0;
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      currentRound = round;
      if (round === WARMUP && backends && paths.has('owner')) {
        const probe = new pg.Client({ connectionString: clusterUrl });
        await probe.connect();
        await probe.query('SELECT pg_stat_statements_reset()');
        await probe.end();
        statementsAt = now();
      }
      // A new order each round: no path always follows the same one (whose leftover work, a
      // publish, a checkpoint, would fall on it).
      for (const p of shuffled(order)) {
        const ms = await (paths.get(p) ?? (() => Promise.resolve(NaN)))();
        if (round >= WARMUP) samples.get(p)?.push(ms);
        if (GAP_MS > 0) await sleep(GAP_MS);
      }
    }
    const load1 = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const cpu = nodes.map((n, i) => cpuOf(n.pid ?? 0) - (cpu0[i] ?? 0));

    log(`bench/consensus-owner: ${ROUNDS} rounds after ${WARMUP} warm-up, the paths in turn, ${GAP_MS > 0 ? `${GAP_MS} ms apart` : 'back to back'}; ms from POST sent to the provisional frame; PostgreSQL and Redis ${backends ? "the bench's own" : 'shared'}; load average ${load0} → ${load1}`);
    log('| path | p50 ms | p99 ms | max ms | p50 ÷ single | p99 ÷ single |');
    log('|---|---|---|---|---|---|');
    const single = samples.get('single');
    const base = single ? latency(single) : null;
    const ratio = (a: number, b: number | undefined) => (b === undefined ? '–' : fmt(a / b, 2));
    for (const p of order) {
      const r = latency(samples.get(p) ?? []);
      log(`| ${LABEL[p]} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.max, 2)} | ${ratio(r.p50, base?.p50)} | ${ratio(r.p99, base?.p99)} |`);
    }
    const paired = (name: string, f: (i: number) => number) => {
      const xs = Array.from({ length: ROUNDS }, (_, i) => f(i));
      const s = Float64Array.from(xs).sort();
      log(`| ${name} | ${fmt(median(xs), 2)} | ${fmt(percentile(s, 25), 2)} | ${fmt(percentile(s, 75), 2)} |`);
    };
    const at = (p: string, i: number) => samples.get(p)?.[i] ?? NaN;
    log('\npaired, per round (ms)\n| figure | median | p25 | p75 |\n|---|---|---|---|');
    if (samples.has('owner') && samples.has('single')) paired('owner − single', (i) => at('owner', i) - at('single', i));
    if (samples.has('owner') && samples.has('single') && samples.has('floor')) paired('**owner − single − floor**', (i) => at('owner', i) - at('single', i) - at('floor', i));
    if (samples.has('forward') && samples.has('owner')) paired('forward − owner', (i) => at('forward', i) - at('owner', i));
    if (samples.has('owner-before') && samples.has('single') && samples.has('floor')) paired('owner-before − single − floor', (i) => at('owner-before', i) - at('single', i) - at('floor', i));
    if (samples.has('owner-before') && samples.has('owner')) paired('**owner − owner-before**', (i) => at('owner', i) - at('owner-before', i));
    if (samples.has('forward-before') && samples.has('forward')) paired('forward − forward-before', (i) => at('forward', i) - at('forward-before', i));
    log(`\nnodes' CPU over the rounds, s: ${cpu.map((c) => fmt(c, 2)).join(' / ')} (in the order started: the single node, then each cluster's owner and other node)`);

    if (backends && statementsAt > 0) {
      const reports = ROUNDS * ((paths.has('owner') ? 1 : 0) + (paths.has('forward') ? 1 : 0));
      const probe = new pg.Client({ connectionString: clusterUrl });
      await probe.connect();
      const top = await probe.query<{ calls: string; ms: string; query: string }>(
        "SELECT calls::text, total_exec_time::text AS ms, regexp_replace(query, '\\s+', ' ', 'g') AS query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() AND query NOT LIKE '%pg_stat_statements%' ORDER BY s.total_exec_time DESC LIMIT 14",
      );
      await probe.end();
      const total = top.rows.reduce((s, r) => s + Number(r.ms), 0);
      log(`\nPostgreSQL's execution time per cluster report (${fmt(reports)} reports, pg_stat_statements; the ticks' own statements included): ${fmt((total * 1000) / reports, 1)} µs in the statements below`);
      for (const r of top.rows) log(`  ${fmt(Number(r.calls) / reports, 2)} a report, ${fmt((Number(r.ms) * 1000) / reports, 1)} µs: ${r.query.slice(0, 150)}`);
    }
  } finally {
    for (const c of closers) await c();
    for (const n of nodes) await stop(n);
    for (const d of databases) await admin.query(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
    await admin.end();
    await backends?.remove();
  }
}

await main();
