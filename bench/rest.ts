// bench/rest: svc's REST API against a bare node:http server returning the same bytes.
// Run: node --import tsx bench/rest.ts   (each run starts from a copy of the archive imported once into bench/.out/pristine)
//   BENCH_MODE=hot|walk|both (default both): `hot` repeats one URL (the response cache answers);
//   `walk` is a client walking the archive, every date's competitions, 100 per page, each URL new
//   to its key (response-cache misses): svc warm, svc just started, svc with its settled days off
//   (the database path), against a bare node:http + better-sqlite3 floor, bare Fastify with svc's
//   repository and no per-request policies (bench/rest-fastify-server.ts), and a bare same-bytes
//   ceiling. BENCH_WALK_DURATION (s, default 8), BENCH_WALK_KEYS (default 8: one
//   connection per key), BENCH_CPU_PROF=1 (V8 profile of svc into bench/.out/prof).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { Client } from 'undici';
import { loadConfig, keyPrefix, openDb, KeyRepo } from '@svc/server';
import { BENCH_DATA, BENCH_KEY, ROOT, fmt, resetBenchData, startProcess, startSvc, stop } from './lib.js';
import { cpuTimes, startSvcForBench } from './stream-common.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function load(url: string, headers: Record<string, string>) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers, pipelining: 1 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

const MODE = process.env.BENCH_MODE ?? 'both';
const WALK_DURATION = Number(process.env.BENCH_WALK_DURATION ?? 8);
const WALK_KEYS = Number(process.env.BENCH_WALK_KEYS ?? 8);

/** Read keys (products live + archive, every sport) made in the bench data dir before svc starts. */
async function readKeys(n: number): Promise<string[]> {
  const config = loadConfig({ SVC_DATA_DIR: BENCH_DATA, SVC_SIMULATOR: 'off' });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const { key } = await repo.create({ name: `walker ${i}`, plan: 'internal', products: ['live', 'archive'], sports: null, leagues: null }, new Date());
      keys.push(key);
    }
    return keys;
  } finally {
    await db.close();
  }
}

/** Every date of the archive, oldest first: one walk URL each (no date holds more than 100 competitions). */
function walkUrls(): string[] {
  const db = new Database(path.join(BENCH_DATA, 'svc.db'), { readonly: true });
  try {
    return db
      .prepare<[], { date: string }>('select distinct date from competitions order by date')
      .all()
      .map((r) => `/v1/competitions?date=${r.date}&limit=100`);
  } finally {
    db.close();
  }
}

interface WalkResult {
  rps: number;
  /** The server's CPU time (user, kernel) per answered request, in µs: steadier than req/s on a shared machine. */
  cpuUser: number;
  cpuSystem: number;
  p50: number;
  p99: number;
  /** The most times any key came back to a URL it had already asked for. */
  laps: number;
}

/**
 * One keep-alive connection per key; connection i starts its walk at its own offset of the date
 * list, so no two keys ask for the same page at the same moment and, unless a key gets through
 * the whole archive within the run, no key asks for a URL twice.
 */
async function walk(port: number, keys: string[], urls: string[], seconds: number, server?: ChildProcess): Promise<WalkResult> {
  const latencies: number[] = [];
  const cpu0 = cpuTimes(server?.pid);
  let laps = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    keys.map(async (key, k) => {
      const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1, keepAliveTimeout: 30_000 });
      const headers = { authorization: `Bearer ${key}` };
      let i = Math.floor((k * urls.length) / keys.length);
      let done = 0;
      try {
        while (performance.now() < end) {
          const t0 = performance.now();
          const res = await client.request({ method: 'GET', path: urls[i % urls.length], headers });
          const body = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`${urls[i % urls.length]}: ${res.statusCode} ${body.slice(0, 200)}`);
          latencies.push(performance.now() - t0);
          i++;
          done++;
        }
      } finally {
        await client.close();
      }
      laps = Math.max(laps, Math.floor(done / urls.length));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu1 = cpuTimes(server?.pid);
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const perRequest = (s: number) => (s * 1e6) / latencies.length;
  return { rps: latencies.length / elapsed, p50: at(50), p99: at(99), laps, cpuUser: perRequest(cpu1.user - cpu0.user), cpuSystem: perRequest(cpu1.system - cpu0.system) };
}

/** svc and a baseline must answer every walk URL with the same bytes, or the comparison means nothing. */
async function checkSameBytes(urls: string[], svcPort: number, floorPort: number): Promise<void> {
  const client = { svc: new Client(`http://127.0.0.1:${svcPort}`), floor: new Client(`http://127.0.0.1:${floorPort}`) };
  try {
    for (const url of urls) {
      const a = await client.svc.request({ method: 'GET', path: url, headers: { authorization: `Bearer ${BENCH_KEY}` } });
      const b = await client.floor.request({ method: 'GET', path: url });
      const [x, y] = [await a.body.text(), await b.body.text()];
      if (a.statusCode !== 200 || x !== y) throw new Error(`${url}: svc and the baseline differ\nsvc:      ${x.slice(0, 300)}\nbaseline: ${y.slice(0, 300)}`);
    }
  } finally {
    await Promise.all([client.svc.close(), client.floor.close()]);
  }
}

/** A walk of `seconds` after a 2 s warm-up from the far end of the date list, with a key that is not a walking key. */
async function warmWalk(port: number, warmKey: string, keys: string[], urls: string[], server: ChildProcess): Promise<WalkResult> {
  await walk(port, [warmKey], [...urls].reverse(), 2);
  return walk(port, keys, urls, WALK_DURATION, server);
}

async function walkRows(svcPort: number, svcProcess: ChildProcess, keys: string[]): Promise<string[]> {
  const urls = walkUrls();
  const db = path.join(BENCH_DATA, 'svc.db');
  const floor = await startProcess(['bench/rest-floor-server.ts', db, '18082'], {}, /ready/);
  const results: { name: string; r: WalkResult }[] = [];
  const row = (name: string, r: WalkResult) => results.push({ name, r });
  // The database path alone: svc with its settled days turned off.
  const databasePath = await startSvc(18085, { SVC_SETTLED_DAYS_MB: '0' });
  try {
    process.stderr.write(`walk: checking ${urls.length} URLs byte for byte (svc, and svc without settled days)\n`);
    await checkSameBytes(urls, svcPort, 18082);
    await checkSameBytes(urls, 18085, 18082);
    process.stderr.write('walk: svc\n');
    row('svc, settled days in memory (every request a response-cache miss)', await warmWalk(svcPort, BENCH_KEY, keys, urls, svcProcess));
    process.stderr.write('walk: svc, database path\n');
    row('svc, settled days off (SVC_SETTLED_DAYS_MB=0): every request runs SQL', await warmWalk(18085, BENCH_KEY, keys, urls, databasePath));
    process.stderr.write('walk: floor\n');
    // Warm-ups use URLs from the far end of the list the measured walk starts from.
    await walk(18082, ['-'], [...urls].reverse(), 2);
    row('floor: bare node:http + better-sqlite3, same keyset query', await walk(18082, keys, urls, WALK_DURATION, floor));
  } finally {
    await Promise.all([stop(floor), stop(databasePath)]);
  }
  process.stderr.write('walk: svc just started\n');
  // No check pass and no warm-up: each day is read from the database the first time it is asked for.
  const cold = await startSvc(18086);
  try {
    row('svc just started: no warm-up, each day read from the database on its first request', await walk(18086, keys, urls, WALK_DURATION, cold));
  } finally {
    await stop(cold);
  }
  process.stderr.write('walk: bare Fastify + svc repository\n');
  const fastify = await startProcess(['bench/rest-fastify-server.ts', BENCH_DATA, '18084'], {}, /ready/);
  try {
    await checkSameBytes(urls, svcPort, 18084);
    await walk(18084, ['-'], [...urls].reverse(), 2);
    row('middle: bare Fastify + svc CompetitionRepo and response schema, no policies', await walk(18084, keys, urls, WALK_DURATION, fastify));
  } finally {
    await stop(fastify);
  }
  process.stderr.write('walk: ceiling\n');
  const ceiling = await startProcess(['bench/rest-floor-server.ts', db, '18083', 'ceiling'], {}, /ready/);
  try {
    await walk(18083, ['-'], [...urls].reverse(), 2);
    row('ceiling: bare node:http, same bytes from memory', await walk(18083, keys, urls, WALK_DURATION, ceiling));
  } finally {
    await stop(ceiling);
  }
  const [svc, sql, floorR, coldR, middleR, ceilingR] = results.map((x) => x.r);
  const verdict = (ratio: number, goal: number) => `${fmt(ratio, 2)} (goal ≥ ${goal} ${ratio >= goal ? 'met' : 'NOT met'})`;
  return [
    `walk — ${urls.length} dates (one page each), ${keys.length} keys × 1 keep-alive connection, ${WALK_DURATION} s per server; svc answers (both paths) verified byte-equal to the floor's for every URL`,
    '| server | req/s | p50 ms | p99 ms | server CPU µs/request (user + kernel) | laps of the archive (max per key) |',
    '|---|---|---|---|---|---|',
    ...results.map(({ name, r }) => `| ${name} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.cpuUser + r.cpuSystem)} (${fmt(r.cpuUser)} + ${fmt(r.cpuSystem)}) | ${r.laps} |`),
    '',
    `svc / floor: ${verdict(svc.rps / floorR.rps, 0.5)}; svc / ceiling: ${verdict(svc.rps / ceilingR.rps, 0.3)}; ` +
      `just started / ceiling: ${fmt(coldR.rps / ceilingR.rps, 2)}; settled days off / floor: ${fmt(sql.rps / floorR.rps, 2)}, / ceiling: ${fmt(sql.rps / ceilingR.rps, 2)}; ` +
      `floor / ceiling: ${fmt(floorR.rps / ceilingR.rps, 2)}; bare Fastify + repository / floor: ${fmt(middleR.rps / floorR.rps, 2)}`,
  ];
}

async function main() {
  fs.mkdirSync(path.join(ROOT, 'bench/.out'), { recursive: true });
  await resetBenchData();
  const walkKeys = MODE === 'hot' ? [] : await readKeys(WALK_KEYS);
  const svc = await startSvcForBench(18080);
  const headers = { authorization: `Bearer ${BENCH_KEY}` };
  const cases = [
    { name: 'GET /v1/competitions?limit=100', path: '/v1/competitions?limit=100', goal: 0.5 },
    { name: 'GET /v1/teams/:id', path: '/v1/teams/team:wc:BRA', goal: 0.7 },
  ];
  const rows: string[] = [];
  let walked: string[] = [];
  try {
    for (const c of MODE === 'walk' ? [] : cases) {
      const res = await fetch(`http://127.0.0.1:18080${c.path}`, { headers });
      if (res.status !== 200) throw new Error(`${c.path}: ${res.status}`);
      const file = path.join(ROOT, 'bench/.out', `${c.name.replace(/\W+/g, '_')}.json`);
      fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      await load(`http://127.0.0.1:18080${c.path}`, headers); // warm-up
      const ours = await load(`http://127.0.0.1:18080${c.path}`, headers);
      const bare = await startProcess(['bench/bare-http-server.ts', file, '18081'], {}, /ready/);
      let base;
      try {
        await load('http://127.0.0.1:18081/', headers);
        base = await load('http://127.0.0.1:18081/', headers);
      } finally {
        await stop(bare);
      }
      const ratio = ours.rps / base.rps;
      rows.push(
        `| ${c.name} | ${fmt(ours.rps)} | ${fmt(ours.p99, 1)} | ${fmt(base.rps)} | ${fmt(base.p99, 1)} | ${fmt(ratio, 2)} | ≥ ${c.goal} ${ratio >= c.goal ? 'met' : 'NOT met'} |`,
      );
    }
    if (MODE !== 'hot') walked = await walkRows(18080, svc, walkKeys);
  } finally {
    await stop(svc);
  }
  const table = [
    ...(rows.length
      ? [
          `bench/rest — SQLite, ${CONNECTIONS} connections, ${DURATION} s per run, response bytes identical for both servers`,
          '| endpoint | svc req/s | svc p99 ms | bare node:http req/s | bare p99 ms | ratio | goal |',
          '|---|---|---|---|---|---|---|',
          ...rows,
          '',
        ]
      : []),
    ...walked,
  ].join('\n');
  process.stdout.write(`${table}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
