// bench/capacity: what each unit of work costs a cluster, measured rather than guessed
// (docs/capacity.md builds its projection on these figures). Two compiled `svc serve` nodes on a
// PostgreSQL and a Redis of the bench's own (so every statement and command counted is svc's:
// pg_stat_statements is loaded, Redis counts its commands and bytes), one phase per unit:
//   play, to the owner   three reporters agree on a score at the node owning the game: one
//                        provisional and one confirmed event, each framed on both nodes;
//   play, to the other   the same three reports posted to the node that does not own the game;
//   frame per subscriber the same plays with BENCH_SUBSCRIBERS stream clients (half on each
//                        node), less the plays' own cost;
//   webhook attempt      the same plays with BENCH_ENDPOINTS endpoints of a local receiver
//                        (tier confirmed), less the plays' own cost;
//   export line          the largest closed season's events exported once (NDJSON).
// Each phase's figures are deltas of: the nodes' CPU (/proc), PostgreSQL's processes' CPU,
// statements (pg_stat_statements calls), round trips to PostgreSQL (the nodes connect through a
// relay that counts the server's ReadyForQuery messages), WAL bytes, Redis's CPU, commands and
// bytes in and out.
// The baseline, one node on SQLite (no PostgreSQL, no Redis), runs beside the cluster for the whole
// bench: the plays posted to the owner are taken in BENCH_ROUNDS rounds, each round one chunk of
// plays on the cluster and one on the single node, in an order drawn anew each round, so both see
// the same machine; the ratio of their node CPU a play is printed, per round and over all rounds.
// Run: npm run build && node --import tsx bench/capacity.ts
//   (BENCH_PLAYS=300 BENCH_ROUNDS=6 BENCH_SUBSCRIBERS=1000 BENCH_ENDPOINTS=20
//   BENCH_UNITS=frames,webhooks,export; BENCH_UNITS=plays measures the plays alone).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { BENCH_DATA, BENCH_KEY, fmt, resetBenchData, stop } from './lib.js';
import { Backends, cpuOf, PgTripCounter, cpuWithChildren, freePort, redisInfo, reporterKeys, rssOf, sleep, startNode, Subscribers, until } from './cluster-parts.js';
import { spacedObservations, todaysBuckets, type SpacedObservation } from './today.js';

const PLAYS = Number(process.env.BENCH_PLAYS ?? 300);
/** Rounds the plays to the owner are split into, each paired with as many on the single node. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 6));
/** The single node's own copy of the freshly imported database, beside the cluster's. */
const SINGLE_DATA = `${BENCH_DATA}-single`;
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 20);
/** The phases after the plays' own (BENCH_UNITS=plays for the plays alone, e.g. under a profiler). */
const UNITS = new Set((process.env.BENCH_UNITS ?? 'frames,webhooks,export').split(','));
const log = (s: string) => process.stdout.write(`${s}\n`);

/** What a phase is measured by: totals read before and after it. */
interface Snapshot {
  nodes: number;
  pgCpu: number;
  redisCpu: number;
  statements: number;
  trips: number;
  walBytes: number;
  redisCommands: number;
  redisBytesIn: number;
  redisBytesOut: number;
}

async function snapshot(b: Backends, nodes: ChildProcess[], probe: pg.Client, relay: PgTripCounter): Promise<Snapshot> {
  const statements = await probe.query<{ n: string }>(
    "SELECT coalesce(sum(calls), 0)::text AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'svc' AND s.query NOT LIKE '%pg_stat_statements%' AND s.query NOT LIKE '%pg_current_wal_lsn%'",
  );
  const wal = await probe.query<{ n: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS n");
  const stats = await redisInfo(b.redisPort, 'stats');
  return {
    nodes: nodes.reduce((sum, n) => sum + cpuOf(n.pid ?? 0), 0),
    pgCpu: cpuWithChildren(b.pgPid),
    redisCpu: cpuOf(b.redisPid),
    statements: Number(statements.rows[0]?.n ?? 0),
    trips: relay.trips,
    walBytes: Number(wal.rows[0]?.n ?? 0),
    // The INFO call itself is one command.
    redisCommands: Number(stats.total_commands_processed ?? 0) - 1,
    redisBytesIn: Number(stats.total_net_input_bytes ?? 0),
    redisBytesOut: Number(stats.total_net_output_bytes ?? 0),
  };
}

const minus = (a: Snapshot, b: Snapshot): Snapshot => ({
  nodes: a.nodes - b.nodes,
  pgCpu: a.pgCpu - b.pgCpu,
  redisCpu: a.redisCpu - b.redisCpu,
  statements: a.statements - b.statements,
  trips: a.trips - b.trips,
  walBytes: a.walBytes - b.walBytes,
  redisCommands: a.redisCommands - b.redisCommands,
  redisBytesIn: a.redisBytesIn - b.redisBytesIn,
  redisBytesOut: a.redisBytesOut - b.redisBytesOut,
});
const plus = (a: Snapshot, b: Snapshot): Snapshot => ({
  nodes: a.nodes + b.nodes,
  pgCpu: a.pgCpu + b.pgCpu,
  redisCpu: a.redisCpu + b.redisCpu,
  statements: a.statements + b.statements,
  trips: a.trips + b.trips,
  walBytes: a.walBytes + b.walBytes,
  redisCommands: a.redisCommands + b.redisCommands,
  redisBytesIn: a.redisBytesIn + b.redisBytesIn,
  redisBytesOut: a.redisBytesOut + b.redisBytesOut,
});
const per = (s: Snapshot, n: number): Snapshot => ({
  nodes: s.nodes / n,
  pgCpu: s.pgCpu / n,
  redisCpu: s.redisCpu / n,
  statements: s.statements / n,
  trips: s.trips / n,
  walBytes: s.walBytes / n,
  redisCommands: s.redisCommands / n,
  redisBytesIn: s.redisBytesIn / n,
  redisBytesOut: s.redisBytesOut / n,
});

/** Plays, one after another: the three reporters each report the same observation, which no other play's joins. */
async function postPlays(base: string, next: () => SpacedObservation, keys: string[], plays: number): Promise<void> {
  for (let i = 0; i < plays; i++) {
    const { body } = next();
    for (const key of keys) {
      const res = await request(`${base}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const text = await res.body.text();
      if (res.statusCode !== 202) throw new Error(`POST /v1/reports: ${res.statusCode} ${text}`);
    }
  }
}

function row(unit: string, s: Snapshot): void {
  const us = (x: number) => fmt(x * 1e6, 1);
  log(`| ${unit} | ${us(s.nodes)} | ${us(s.pgCpu)} | ${us(s.redisCpu)} | ${fmt(s.statements, 2)} | ${fmt(s.trips, 2)} | ${fmt(s.walBytes, 0)} | ${fmt(s.redisCommands, 2)} | ${fmt(s.redisBytesIn, 0)} / ${fmt(s.redisBytesOut, 0)} |`);
}

const loadNow = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  await resetBenchData();
  fs.rmSync(SINGLE_DATA, { recursive: true, force: true });
  fs.mkdirSync(SINGLE_DATA, { recursive: true });
  for (const f of ['svc.db', 'secret.key']) if (fs.existsSync(path.join(BENCH_DATA, f))) fs.copyFileSync(path.join(BENCH_DATA, f), path.join(SINGLE_DATA, f));
  const b = await Backends.start();
  const nodes: ChildProcess[] = [];
  let lone: ChildProcess | null = null;
  const probe = new pg.Client({ connectionString: b.databaseUrl });
  let receiver: http.Server | null = null;
  let relay: PgTripCounter | null = null;
  try {
    relay = await PgTripCounter.start(b.pgPort);
    const env = { SVC_DATABASE_URL: relay.urlOf(b.databaseUrl), SVC_REDIS_URL: b.redisUrl, SVC_WEBHOOK_ALLOW_PRIVATE: 'on' };
    const [portA, portB] = [await freePort(), await freePort()];
    nodes.push(await startNode(portA, { ...env, SVC_NODE_ID: 'a' }));
    nodes.push(await startNode(portB, { ...env, SVC_NODE_ID: 'b' }));
    await probe.connect();
    const a = `http://127.0.0.1:${portA}`;
    const bUrl = `http://127.0.0.1:${portB}`;
    const keys = await reporterKeys(b.databaseUrl);
    const buckets = await todaysBuckets(a);
    const next = spacedObservations(buckets);
    // Node A takes every game first (a report of its own for each), so it owns them all.
    for (const bucket of buckets) {
      const res = await request(`${a}/v1/reports`, { method: 'POST', headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...bucket, observed_at: new Date(Date.now() - 5.5 * 3_600_000).toISOString() }) });
      await res.body.text();
    }
    const one = await Subscribers.open([a, bUrl], 2);
    // The baseline beside it: one node on SQLite alone, with a subscriber of its own.
    const portC = await freePort();
    lone = await startNode(portC, { SVC_DATA_DIR: SINGLE_DATA });
    const c = `http://127.0.0.1:${portC}`;
    const loneKeys = await reporterKeys('', SINGLE_DATA);
    const loneNext = spacedObservations(await todaysBuckets(c));
    const loneOne = await Subscribers.open([c], 1);
    // A warm-up of plays through every node: the JIT, the pools and the statement caches.
    await postPlays(a, next, keys, 50);
    await postPlays(bUrl, next, keys, 50);
    await postPlays(c, loneNext, loneKeys, 100);
    await until('the warm-up frames', () => one.frames >= 2 * 100 * 2 && loneOne.frames >= 100 * 2);
    await sleep(1000);

    const loadAtStart = loadNow();
    log(`bench/capacity: two compiled nodes on a PostgreSQL ${(await probe.query<{ server_version: string }>('show server_version')).rows[0]?.server_version} and a Redis of their own, and one node on SQLite alone beside them; ${PLAYS} plays a phase (three reports each: a provisional and a confirmed event), the owner's in ${ROUNDS} rounds paired with the single node's; ${os.cpus().length} CPUs, load ${loadAtStart}`);
    log('| unit | nodes CPU µs | PostgreSQL CPU µs | Redis CPU µs | statements | round trips | WAL bytes | Redis commands | Redis bytes in / out |');
    log('|---|---|---|---|---|---|---|---|---|');

    const counted = relay;
    const phase = async (work: () => Promise<void>): Promise<Snapshot> => {
      const s0 = await snapshot(b, nodes, probe, counted);
      await work();
      await sleep(500);
      return minus(await snapshot(b, nodes, probe, counted), s0);
    };
    const framesAt = () => one.frames;
    const playsTo = (base: string) => async () => {
      const start = framesAt();
      await postPlays(base, next, keys, PLAYS);
      await until('every play framed on both nodes', () => one.frames >= start + PLAYS * 2 * 2);
    };

    await probe.query('SELECT pg_stat_statements_reset()');
    // The plays' own cost, taken off the phases that add subscribers or endpoints to them: in
    // rounds, each paired with as many plays on the single node, in a random order.
    const lonePid = lone.pid ?? 0;
    const loneChunk = async (n: number): Promise<number> => {
      const c0 = cpuOf(lonePid);
      const start = loneOne.frames;
      await postPlays(c, loneNext, loneKeys, n);
      await until('every play framed on the single node', () => loneOne.frames >= start + n * 2);
      await sleep(500);
      return cpuOf(lonePid) - c0;
    };
    let playsAlone: Snapshot | null = null;
    let loneCpu = 0;
    const ratios: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const n = Math.floor(PLAYS / ROUNDS) + (r < PLAYS % ROUNDS ? 1 : 0);
      let clusterRound: Snapshot | null = null;
      let loneRound = 0;
      for (const side of Math.random() < 0.5 ? ['cluster', 'single'] : ['single', 'cluster']) {
        if (side === 'single') loneRound = await loneChunk(n);
        else {
          const start = framesAt();
          clusterRound = await phase(async () => {
            await postPlays(a, next, keys, n);
            await until('every play framed on both nodes', () => one.frames >= start + n * 2 * 2);
          });
        }
      }
      if (!clusterRound) throw new Error('a round without its cluster chunk');
      playsAlone = playsAlone ? plus(playsAlone, clusterRound) : clusterRound;
      loneCpu += loneRound;
      ratios.push(fmt(clusterRound.nodes / loneRound, 2));
    }
    if (!playsAlone) throw new Error('no rounds');
    row('a play (3 reports, 2 events), posted to the owner', per(playsAlone, PLAYS));
    log(`| a play on one node, SQLite, alone (the baseline, the same rounds) | ${fmt((loneCpu / PLAYS) * 1e6, 1)} | – | – | – | – | – | – | – |`);
    const ownerRatio = playsAlone.nodes / loneCpu;
    const perReport = per(playsAlone, PLAYS * 3);
    const top = await probe.query<{ calls: string; query: string }>(
      "SELECT calls::text, regexp_replace(query, '\\s+', ' ', 'g') AS query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'svc' AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_current_wal_lsn%' ORDER BY s.calls DESC LIMIT 20",
    );
    const statementsOfPlays = top.rows.map((r) => `  ${fmt(Number(r.calls) / PLAYS, 2)} a play: ${r.query.slice(0, 140)}`);
    row('a play, posted to the other node', per(await phase(playsTo(bUrl)), PLAYS));

    if (UNITS.has('frames')) {
      const rssBefore = nodes.reduce((sum, n) => sum + rssOf(n.pid ?? 0), 0);
      const many = await Subscribers.open([a, bUrl], SUBSCRIBERS);
      await sleep(1000);
      const rssHeld = (nodes.reduce((sum, n) => sum + rssOf(n.pid ?? 0), 0) - rssBefore) / SUBSCRIBERS;
      const fanout = await phase(async () => {
        const start = many.frames;
        await playsTo(a)();
        await until('every subscriber framed', () => many.frames >= start + PLAYS * 2 * SUBSCRIBERS);
      });
      many.close();
      log(`| a subscriber held: the nodes' resident memory | ${fmt(rssHeld / 1024, 1)} KiB | – | – | – | – | – | – | – |`);
      const framesDelivered = PLAYS * 2 * SUBSCRIBERS;
      row(`a frame to a subscriber (${fmt(SUBSCRIBERS)} subscribers, less the plays)`, per(minus(fanout, playsAlone), framesDelivered));
    }

    if (UNITS.has('webhooks')) {
      let delivered = 0;
      receiver = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          delivered += 1;
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((r) => receiver?.listen(0, '127.0.0.1', r));
      const address = receiver.address();
      const hookPort = address && typeof address !== 'string' ? address.port : 0;
      for (let i = 0; i < ENDPOINTS; i++) {
        const res = await request(`${a}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:${hookPort}/hook/${i}`, tier: 'confirmed' }) });
        const text = await res.body.text();
        if (res.statusCode !== 201) throw new Error(`POST /v1/webhooks: ${res.statusCode} ${text}`);
    }
    const hooks = await phase(async () => {
      await playsTo(a)();
      await until('every delivery', () => delivered >= PLAYS * ENDPOINTS);
    });
    row(`a webhook attempt (${ENDPOINTS} endpoints, less the plays)`, per(minus(hooks, playsAlone), PLAYS * ENDPOINTS));
    }

    if (UNITS.has('export')) {
      const seasons = (await (await fetch(`${a}/v1/seasons?limit=1000`, { headers: { authorization: `Bearer ${BENCH_KEY}` } })).json()) as { data: { id: string; league: string; end: string; events: number }[] };
      const today = new Date().toISOString().slice(0, 10);
      const biggest = seasons.data.filter((s) => s.end < today).sort((x, y) => y.events - x.events)[0];
      if (!biggest) throw new Error('no closed season to export');
      const year = biggest.id.split('_').pop() ?? '';
      let lines = 0;
      const exported = await phase(async () => {
        const res = await request(`${a}/v1/export?league=${biggest.league}&season=${year}&entity=events`, { headers: { authorization: `Bearer ${BENCH_KEY}` } });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${text.slice(0, 300)}`);
        lines = text.split('\n').length - 1;
      });
      row(`an export line (${biggest.id}: ${fmt(lines)} events, NDJSON, the database path)`, per(exported, lines));
    }
    one.close();
    loneOne.close();
    log('\nthe statements of a play posted to the owner, by calls (pg_stat_statements):');
    for (const line of statementsOfPlays) log(line);
    log(`\nnode CPU a play, the cluster (both nodes, posted to the owner) ÷ one SQLite node alone, the same rounds: **${fmt(ownerRatio, 2)}** (goal ≤ 1.5; per round ${ratios.join(', ')}, median ${fmt(median(ratios.map(Number)), 2)})`);
    log(`a report on the cluster: ${fmt(perReport.statements, 2)} PostgreSQL statements, ${fmt(perReport.trips, 2)} round trips (a play is three reports); load ${loadAtStart} at the start, ${loadNow()} at the end`);
  } finally {
    receiver?.close();
    await relay?.close();
    await probe.end().catch(() => undefined);
    for (const n of nodes.splice(0)) await stop(n);
    if (lone) await stop(lone);
    await b.remove();
  }
}

await main();
