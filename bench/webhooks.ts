// bench/webhooks: deliveries/s from svc's webhook dispatcher to a local receiver, against a bare
// undici POST loop at the same concurrency in the same run, and the cost of enqueuing one
// confirmed event for 100 subscribed endpoints (the outbox hook inside the append transaction).
// Run: node --import tsx bench/webhooks.ts
// Knobs: BENCH_DELIVERIES=20000  BENCH_ENDPOINTS=8  BENCH_PER_ENDPOINT=8 (concurrency = both
// multiplied)  BENCH_ENQUEUE_EVENTS=500 (0 skips the enqueue rows)  BENCH_PG_URL=postgres://… (adds
// PostgreSQL rows). CPU time (process.cpuUsage(): this process, the receiver excluded) is printed
// per POST and per delivery: steadier than throughput on a shared machine. BENCH_CPU_PROF=1 writes
// a V8 CPU profile of the dispatcher's measured part to bench/.out/prof.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { loadConfig, isoTime, systemClock, openDb, type Db, EventLog, type NewEvent, KeyRepo, principalOf, createWebhooks } from '@svc/server';
import { ROOT, fmt, startProcess, stop } from './lib.js';

/** Endpoint secrets are sealed at rest; the bench's database lives only for the run. */
const BENCH_SECRET_KEY = randomBytes(32).toString('hex');

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 8);
const PER_ENDPOINT = Number(process.env.BENCH_PER_ENDPOINT ?? 8);
const CONCURRENCY = ENDPOINTS * PER_ENDPOINT;
const ENQUEUE_EVENTS = Number(process.env.BENCH_ENQUEUE_EVENTS ?? 500);
const FANOUT = 100;
const log = (line: string) => process.stderr.write(`[bench/webhooks] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// The receiver runs in its own process so it does not share a CPU with what is measured.

if (process.argv[2] === 'receiver') {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(Number(process.env.RECEIVER_PORT), '127.0.0.1', () => process.stdout.write('receiver ready\n'));
} else {
  await main();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a !== 'string' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

function eventRow(i: number): NewEvent {
  return {
    type: 'score',
    tier: 'confirmed',
    game_id: 'soccer_900001',
    competition_id: 'soccer_bench_900001',
    sport: 'soccer',
    league: 'bench',
    season_id: 'bench_2026',
    team: i % 2 ? 'HOM' : 'AWY',
    event_type: 'goal',
    points: 1,
    clock: `${i % 90}'`,
    ts: isoTime(Date.now()),
    agreement: 0.8,
    reporters: 4,
    latency_ms: 1200, probability: 1,
    provisional_id: null,
    retracted_id: null,
  };
}

/** The bare loop: the same POST (body and headers of a delivery) at the same concurrency, nothing else. */
async function bareLoop(url: string, total: number): Promise<{ perS: number; cpuUs: number }> {
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  const body = JSON.stringify({ id: 'evt_000000000001', type: 'score', tier: 'confirmed', game_id: 'soccer_900001', team: 'HOM', points: 1, ts: new Date().toISOString(), confidence: { agreement: 0.8, reporters: 4, latency_ms: 1200, probability: 1 }, provisional_id: 'evt_000000000000', schema: 'svc.event.v1' });
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1.0',
    'x-svc-topic': 'event.score',
    'x-svc-event-id': 'evt_000000000001',
    'x-svc-delivery-id': 'dlv_AAAAAAAAAAAAAAAAAAAAAAAA',
    'x-svc-attempt': '1',
    'x-svc-signature': `t=1750000000,v1=${'a'.repeat(64)}`,
  };
  let next = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next += 1;
        const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  await agent.close();
  return { perS: total / s, cpuUs: (c.user + c.system) / total };
}

interface Setup {
  db: Db;
  close(): Promise<void>;
}

async function openStore(engine: 'sqlite' | 'postgres'): Promise<Setup> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-wh-'));
  if (engine === 'sqlite') {
    // As `svc serve` opens it: the WAL is checkpointed by a background thread, not inside commits.
    const db = await openDb({ dataDir, databaseUrl: null, backgroundCheckpoint: true });
    return { db, close: async () => (await db.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
  }
  const admin = process.env.BENCH_PG_URL ?? '';
  const pg = await import('pg');
  const name = `svc_bench_wh_${process.pid}`;
  const c = new pg.default.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  const db = await openDb({ dataDir, databaseUrl: u.toString(), poolSize: 10 });
  return {
    db,
    close: async () => {
      await db.close();
      const d = new pg.default.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function dispatcherRun(engine: 'sqlite' | 'postgres', url: string): Promise<{ perS: number; delivered: number; cpuUs: number }> {
  const { db, close } = await openStore(engine);
  try {
    const config = loadConfig({ SVC_DATA_DIR: os.tmpdir(), SVC_WEBHOOK_ALLOW_PRIVATE: 'on', SVC_LOG_LEVEL: 'silent', SVC_SECRET_KEY: BENCH_SECRET_KEY });
    const events = new EventLog(db);
    const wh = createWebhooks({ db, config, clock: systemClock, events, dispatcher: { perEndpointConcurrency: PER_ENDPOINT, maxInFlight: CONCURRENCY } });
    const { record } = await new KeyRepo(db, config.env, 'svc_test_').create({ name: 'bench', plan: 'internal', products: ['live'] }, new Date());
    const owner = principalOf(record);
    for (let i = 0; i < ENDPOINTS; i++) await wh.manage.create(owner, { url: `${url}/e${i}`, tier: 'confirmed' });
    const perEvent = ENDPOINTS;
    for (let i = 0; i < DELIVERIES / perEvent; i += 100) {
      await events.append(Array.from({ length: Math.min(100, DELIVERIES / perEvent - i) }, (_, j) => eventRow(i + j)));
    }
    log(`  ${DELIVERIES} outbox rows written`);
    const profiler = process.env.BENCH_CPU_PROF ? await startProfile() : null;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const sent = await wh.dispatcher.runOnce();
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    if (profiler) log(`  profile: ${await profiler.stop(`webhooks-${engine}`)}`);
    await wh.dispatcher.stop();
    const delivered = await db.kysely.selectFrom('webhook_deliveries').select('id').where('status', '=', 'delivered').execute();
    if (sent !== DELIVERIES) throw new Error(`dispatcher sent ${sent}, expected ${DELIVERIES}`);
    return { perS: delivered.length / s, delivered: delivered.length, cpuUs: (c.user + c.system) / DELIVERIES };
  } finally {
    await close();
  }
}

/** A V8 CPU profile of this process from now until stop(), written to bench/.out/prof. */
async function startProfile(): Promise<{ stop(name: string): Promise<string> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const dir = path.join(ROOT, 'bench/.out/prof');
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${name}-${Date.now()}.cpuprofile`);
      fs.writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

/** µs per append of one confirmed event, with 0 and with 100 subscribed endpoints. */
async function enqueueCost(engine: 'sqlite' | 'postgres'): Promise<{ none: number; fanout: number }> {
  const { db, close } = await openStore(engine);
  try {
    const config = loadConfig({ SVC_DATA_DIR: os.tmpdir(), SVC_WEBHOOK_ALLOW_PRIVATE: 'on', SVC_LOG_LEVEL: 'silent', SVC_SECRET_KEY: BENCH_SECRET_KEY });
    const events = new EventLog(db);
    const wh = createWebhooks({ db, config, clock: systemClock, events });
    const time = async (n: number) => {
      for (let i = 0; i < 50; i++) await events.append([eventRow(i)]);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await events.append([eventRow(i)]);
      return ((performance.now() - t0) * 1000) / n;
    };
    const none = await time(ENQUEUE_EVENTS);
    const { record } = await new KeyRepo(db, config.env, 'svc_test_').create({ name: 'bench', plan: 'internal', products: ['live'] }, new Date());
    const owner = principalOf(record);
    for (let i = 0; i < FANOUT; i++) await wh.manage.create(owner, { url: `http://127.0.0.1:9/e${i}`, tier: 'confirmed' });
    const fanout = await time(ENQUEUE_EVENTS);
    const rows = await db.kysely.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    if (Number(rows.n) !== (ENQUEUE_EVENTS + 50) * FANOUT) throw new Error(`expected ${(ENQUEUE_EVENTS + 50) * FANOUT} outbox rows, found ${rows.n}`);
    return { none, fanout };
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  const port = await freePort();
  const receiver = await startProcess(['bench/webhooks.ts', 'receiver'], { RECEIVER_PORT: String(port) }, /receiver ready/);
  const url = `http://127.0.0.1:${port}`;
  const engines: ('sqlite' | 'postgres')[] = process.env.BENCH_PG_URL ? (process.env.BENCH_PG_ONLY ? ['postgres'] : ['sqlite', 'postgres']) : ['sqlite'];
  const rows: string[] = [];
  try {
    log(`warm-up; load average ${os.loadavg()[0].toFixed(1)}`);
    await bareLoop(url, 2_000);
    for (const engine of engines) {
      log(`${engine}: bare undici loop, ${DELIVERIES} POSTs at concurrency ${CONCURRENCY}`);
      const bare = await bareLoop(url, DELIVERIES);
      log(`${engine}: dispatcher, ${DELIVERIES} deliveries over ${ENDPOINTS} endpoints × ${PER_ENDPOINT}`);
      const disp = await dispatcherRun(engine, url);
      log(`  ${fmt(disp.perS)} deliveries/s (bare ${fmt(bare.perS)}/s); CPU µs per delivery ${fmt(disp.cpuUs, 1)} (bare ${fmt(bare.cpuUs, 1)} per POST); load average ${os.loadavg()[0].toFixed(1)}`);
      let enq = { none: NaN, fanout: NaN };
      if (ENQUEUE_EVENTS > 0) {
        log(`${engine}: enqueue cost, ${ENQUEUE_EVENTS} appends`);
        enq = await enqueueCost(engine);
      }
      rows.push(
        `| ${engine} | ${CONCURRENCY} | ${fmt(bare.perS)} | ${fmt(disp.perS)} | ${fmt(disp.perS / bare.perS, 2)} | ${fmt(bare.cpuUs, 1)} | ${fmt(disp.cpuUs, 1)} | ${fmt(enq.none, 1)} | ${fmt(enq.fanout, 1)} | ${fmt((enq.fanout - enq.none) / FANOUT, 2)} |`,
      );
    }
  } finally {
    await stop(receiver);
  }
  process.stdout.write(
    [
      '',
      `### bench/webhooks (${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version})`,
      '',
      `${DELIVERIES} deliveries to a local receiver (separate process, answers 200 at once); dispatcher: ${ENDPOINTS} endpoints × ${PER_ENDPOINT} per-endpoint concurrency; bare loop: undici \`request\` at the same total concurrency. Enqueue: one confirmed event per append transaction, ${ENQUEUE_EVENTS} appends.`,
      '',
      '| engine | concurrency | bare undici POST/s | dispatcher deliveries/s | ratio | bare CPU µs/POST | dispatcher CPU µs/delivery | append, no endpoints (µs/event) | append, 100 endpoints (µs/event) | outbox µs per endpoint |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'Command: `node --import tsx bench/webhooks.ts` (PostgreSQL rows: `BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/postgres`).',
      '',
    ].join('\n'),
  );
}
