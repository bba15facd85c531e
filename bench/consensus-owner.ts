// bench/consensus-owner: what owning each game's consensus on one node costs a report.
// Times POST /v1/reports sent → the provisional event's frame received on a stream client, one
// report at a time (BENCH_GAP_MS apart, 5 by default), each report opening a new candidate, on real `svc serve`
// processes, compiled as users run them (`npm run build` first):
//   single   one node on SQLite (the default deployment);
//   owner    two nodes on PostgreSQL + Redis, reports posted to the node that owns the games;
//   forward  the same two nodes, reports posted to the other node (routed to the owner).
//   floor    each store alone, at the same spacing: the smallest write a report could make (BEGIN;
//            one row; COMMIT) on PostgreSQL, durable and without its flush, and on SQLite as the
//            single node opens it. What the cluster's path can at best cost over one node's.
// The stream client is connected to the node the reports are posted to.
// Run: npm run build && node --import tsx bench/consensus-owner.ts   (BENCH_MODES=single,owner,forward,floor
//   BENCH_LATENCY_SAMPLES=400 BENCH_GAP_MS=5; PostgreSQL and Redis from SVC_TEST_PG_URL / SVC_TEST_REDIS_URL or
//   the local defaults)
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { request } from 'undici';
import WebSocket from 'ws';
import { keyPrefix, loadConfig, openDb, KeyRepo } from '@svc/server';
import { startNode } from './cluster-parts.js';
import { BENCH_DATA, BENCH_KEY, fmt, resetBenchData, stop } from './lib.js';
import { now, percentile, roundTripAgent } from './stream-common.js';
import { spacedObservations, todaysBuckets, type Bucket } from './today.js';

const MODES = new Set((process.env.BENCH_MODES ?? 'single,owner,forward,floor').split(','));
const SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 400);
const WARMUP = 50;
// 0 sends each report as soon as the previous one's frame is in: every process stays awake, so
// what is left is svc's own work, without the machine's wake-ups from idle (bench/RESULTS.md).
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 5);
const KEYS = 16;
const PG_ADMIN = process.env.SVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const log = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function makeKeys(databaseUrl: string | null): Promise<string[]> {
  const config = loadConfig({ SVC_DATA_DIR: BENCH_DATA, SVC_SIMULATOR: 'off', SVC_DATABASE_URL: databaseUrl ?? '' });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push((await repo.create({ name: `bench owner ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key);
    return keys;
  } finally {
    await db.close();
  }
}

/** Each report opens a new candidate: buckets in turn, observed times 31 s apart, keys in turn. */
function plan(buckets: Bucket[], keys: string[]): () => { key: string; bucket: Bucket; body: string } {
  const next = spacedObservations(buckets);
  return () => {
    const { bucket, turn, slot, body } = next();
    return { key: keys[(turn + 1 + slot) % keys.length], bucket, body };
  };
}

async function measure(post: string, stream: string, next: ReturnType<typeof plan>): Promise<Latency> {
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
  const lat: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const r = next();
    // Only this report's provisional counts (a shared Redis may carry others' events).
    const arrived = new Promise<number>((resolve) => {
      onFrame = (e) => {
        if (e.tier === 'provisional' && e.game_id === r.bucket.game_id && e.team === r.bucket.team && e.points === r.bucket.points) resolve(now());
      };
    });
    const t0 = now();
    const res = await request(`${post}/v1/reports`, { dispatcher: roundTripAgent, method: 'POST', headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' }, body: r.body });
    const text = await res.body.text();
    if (res.statusCode !== 202) throw new Error(`POST /v1/reports: ${res.statusCode} ${text}`);
    const t = await arrived;
    if (i >= WARMUP) lat.push(t - t0);
    if (GAP_MS > 0) await sleep(GAP_MS);
  }
  ws.terminate();
  return latency(lat);
}

function latency(samples: number[]): Latency {
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

/** `write` timed WARMUP + SAMPLES times, GAP_MS apart as the reports are. */
async function spaced(write: () => unknown): Promise<Latency> {
  const lat: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const t0 = now();
    await write();
    if (i >= WARMUP) lat.push(now() - t0);
    if (GAP_MS > 0) await sleep(GAP_MS);
  }
  return latency(lat);
}

const FLOOR_TABLE = 'create table floor_events (id integer primary key, game_id text not null, body text not null)';
const FLOOR_BODY = 'x'.repeat(600);

/**
 * Each store alone, the smallest transaction a report's write could be, at the reports' spacing:
 * a lower bound of what the store adds to a report's path, with no svc code in it.
 */
async function floors(): Promise<void> {
  const scratch = await scratchDatabase('svc_bench_floor');
  const client = new pg.Client({ connectionString: scratch.url });
  try {
    await client.connect();
    await client.query(FLOOR_TABLE.replace('integer primary key', 'bigserial primary key'));
    await client.query('create index on floor_events (game_id)');
    await client.query('prepare floor_insert as insert into floor_events (game_id, body) values ($1, $2)');
    const insert = `execute floor_insert('g1', '${FLOOR_BODY}')`;
    row('PostgreSQL alone: BEGIN; one row; COMMIT', await spaced(() => client.query(`begin; ${insert}; commit`)));
    row('the same without the commit\'s flush (synchronous_commit off)', await spaced(() => client.query(`begin; set local synchronous_commit = off; ${insert}; commit`)));
  } finally {
    await client.end();
    await scratch.drop();
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-floor-'));
  const db = new SQLite(path.join(dir, 'floor.db'));
  try {
    // As store/sql/db.ts opens the single node's file.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(FLOOR_TABLE);
    db.exec('create index floor_game on floor_events (game_id)');
    const begin = db.prepare('begin');
    const put = db.prepare('insert into floor_events (game_id, body) values (?, ?)');
    const commit = db.prepare('commit');
    row('SQLite alone: BEGIN; one row; COMMIT (WAL, synchronous NORMAL)', await spaced(() => {
      begin.run();
      put.run('g1', FLOOR_BODY);
      commit.run();
    }));
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

type Latency = { p50: number; p99: number; max: number };
/** The single node's row, the baseline of the others' ratios when it ran. */
let baseline: Latency | null = null;

function row(what: string, r: Latency): void {
  const ratio = (a: number, b: number | undefined) => (b === undefined ? '–' : fmt(a / b, 2));
  log(`| ${what} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.max, 2)} | ${ratio(r.p50, baseline?.p50)} | ${ratio(r.p99, baseline?.p99)} |`);
}

async function single(): Promise<void> {
  await resetBenchData();
  const keys = await makeKeys(null);
  const port = 18611;
  const svc = await startNode(port, {});
  try {
    const base = `http://127.0.0.1:${port}`;
    const r = await measure(base, `ws://127.0.0.1:${port}`, plan(await todaysBuckets(base), keys));
    baseline = r;
    row('single node, SQLite', r);
  } finally {
    await stop(svc);
  }
}

/** A database of the run's own on the bench's PostgreSQL, dropped at the end. */
async function scratchDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function cluster(): Promise<void> {
  const scratch = await scratchDatabase('svc_bench_owner');
  const databaseUrl = scratch.url;
  const nodes: ChildProcess[] = [];
  try {
    const env = { SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: REDIS };
    nodes.push(await startNode(18621, env));
    nodes.push(await startNode(18622, env));
    const keys = await makeKeys(databaseUrl);
    const a = 'http://127.0.0.1:18621';
    const b = 'http://127.0.0.1:18622';
    const buckets = await todaysBuckets(a);
    const next = plan(buckets, keys);
    // Node A takes every game first, so it owns them all for the rest of the run.
    for (const bucket of buckets) {
      const res = await request(`${a}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...bucket, observed_at: new Date(Date.now() - 3_600_000).toISOString() }) });
      await res.body.text();
    }
    if (MODES.has('owner')) row('two nodes, PostgreSQL + Redis, posted to the owner', await measure(a, 'ws://127.0.0.1:18621', next));
    if (MODES.has('forward')) row('two nodes, PostgreSQL + Redis, posted to the non-owner', await measure(b, 'ws://127.0.0.1:18622', next));
  } finally {
    for (const n of nodes) await stop(n);
    await scratch.drop();
  }
}

log(`bench/consensus-owner: ${SAMPLES} reports per row after ${WARMUP} warm-up, ${GAP_MS > 0 ? `${GAP_MS} ms apart` : 'back to back'}; ms from POST sent to the provisional frame`);
log('| path | p50 ms | p99 ms | max ms | p50 ÷ single | p99 ÷ single |');
log('|---|---|---|---|---|---|');
if (MODES.has('single')) await single();
if (MODES.has('owner') || MODES.has('forward')) await cluster();
if (MODES.has('floor')) await floors();
