// bench/cluster-overhead: what coordination costs the nodes of a cluster. The same live load on
// three compiled nodes (PostgreSQL + Redis of the bench's own) and on one node alone (the same
// PostgreSQL, no Redis): `svc simulate` at BENCH_SPEED× posting to the first node,
// BENCH_SUBSCRIBERS stream clients spread over the nodes, BENCH_ENDPOINTS webhook endpoints
// (confirmed events) on a local receiver. After a warm-up, for BENCH_SECONDS, the nodes' CPU (/proc) per message delivered
// (stream messages received plus webhook deliveries received); the cluster's figure ÷ the lone
// node's is the coordination overhead (goal ≤ 1.3). The simulator's load is random, not replayed:
// what is compared is CPU per unit delivered, not totals.
// Run: npm run build && node --import tsx bench/cluster-overhead.ts
//   (BENCH_SPEED=60 BENCH_SUBSCRIBERS=3000 BENCH_ENDPOINTS=200 BENCH_SECONDS=60 BENCH_WARMUP=15; first, each
//   node's CPU while idle over BENCH_IDLE=10 s; user / system CPU and write syscalls from /proc; then each
//   deployment's PostgreSQL statements per webhook delivery while measured, by statement, from pg_stat_statements)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import { request } from 'undici';
import { BENCH_DATA, BENCH_KEY, ROOT, fmt, resetBenchData, stop } from './lib.js';
import { Backends, freePort, sleep, startNode, Subscribers, usageOf, usageSince, type Usage } from './cluster-parts.js';

const SPEED = Number(process.env.BENCH_SPEED ?? 60);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 3000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 15);
const IDLE = Number(process.env.BENCH_IDLE ?? 10);

const log = (s: string) => process.stdout.write(`${s}\n`);
const NONE: Usage = { user: 0, system: 0, writes: 0 };

interface Outcome {
  nodes: number;
  cpu: number;
  messages: number;
  deliveries: number;
  /** Webhook claims the nodes made while measured, per delivery. */
  claims: number;
  /** TCP connections the webhook receiver accepted while measured, per delivery. */
  connections: number;
  perNode: number[];
  user: number;
  system: number;
  writes: number;
  /** CPU ms a second of each node before any load (endpoints registered, no clients). */
  idle: number[];
  /** The deployment's PostgreSQL statements while measured (pg_stat_statements), most called first. */
  statements: { calls: number; query: string }[];
}

function simulate(url: string, databaseUrl: string): ChildProcess {
  return spawn(process.execPath, ['--conditions=svc-compiled', 'packages/server/dist/main.js', 'simulate', '--url', url, '--speed', String(SPEED)], {
    cwd: ROOT,
    env: { ...process.env, SVC_DATA_DIR: BENCH_DATA, SVC_DATABASE_URL: databaseUrl, SVC_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
}

/** Statement counts start again from zero (every database of the bench's PostgreSQL). */
async function resetStatements(b: Backends): Promise<void> {
  const c = new pg.Client({ connectionString: b.databaseUrl });
  await c.connect();
  await c.query('SELECT pg_stat_statements_reset()');
  await c.end();
}

/** The statements run in `database` since the last reset, most called first. */
async function statementsOf(b: Backends, database: string): Promise<{ calls: number; query: string }[]> {
  const c = new pg.Client({ connectionString: b.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ calls: string; query: string }>(
      "SELECT calls::text, regexp_replace(query, '\\s+', ' ', 'g') AS query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND query NOT LIKE '%pg_stat_statements%' ORDER BY s.calls DESC",
      [database],
    );
    return rows.map((r) => ({ calls: Number(r.calls), query: r.query }));
  } finally {
    await c.end();
  }
}

async function deployment(b: Backends, count: number, databaseUrl: string, redisUrl: string): Promise<Outcome> {
  await resetBenchData();
  const nodes: ChildProcess[] = [];
  let deliveries = 0;
  let connections = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      deliveries += 1;
      res.writeHead(200).end();
    });
  });
  receiver.on('connection', () => (connections += 1));
  let sim: ChildProcess | null = null;
  let subscribers: Subscribers | null = null;
  try {
    const env = { SVC_DATABASE_URL: databaseUrl, SVC_REDIS_URL: redisUrl, SVC_WEBHOOK_ALLOW_PRIVATE: 'on' };
    const urls: string[] = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      nodes.push(await startNode(port, { ...env, SVC_NODE_ID: `n${i}` }));
      urls.push(`http://127.0.0.1:${port}`);
    }
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const address = receiver.address();
    const hookPort = address && typeof address !== 'string' ? address.port : 0;
    for (let i = 0; i < ENDPOINTS; i++) {
      const res = await request(`${urls[i % urls.length]}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${hookPort}/hook/${i}`, tier: 'confirmed' }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`POST /v1/webhooks: ${res.statusCode} ${text}`);
    }
    await sleep(2000);
    const idle0 = nodes.map((n) => usageOf(n.pid ?? 0));
    await sleep(IDLE * 1000);
    const idle = nodes.map((n, i) => {
      const u = usageSince(idle0[i] ?? NONE, usageOf(n.pid ?? 0));
      return ((u.user + u.system) / IDLE) * 1000;
    });
    subscribers = await Subscribers.open(urls, SUBSCRIBERS);
    sim = simulate(urls[0] ?? '', databaseUrl);
    await sleep(WARMUP * 1000);
    await resetStatements(b);
    const usage0 = nodes.map((n) => usageOf(n.pid ?? 0));
    const [m0, d0, c0, k0] = [subscribers.messages, deliveries, connections, await claimsOf(urls)];
    await sleep(SECONDS * 1000);
    const used = nodes.map((n, i) => usageSince(usage0[i] ?? NONE, usageOf(n.pid ?? 0)));
    const statements = await statementsOf(b, new URL(databaseUrl).pathname.slice(1));
    const sum = (k: 'user' | 'system' | 'writes') => used.reduce((a, u) => a + u[k], 0);
    const perNode = used.map((u) => u.user + u.system);
    return { nodes: count, cpu: sum('user') + sum('system'), messages: subscribers.messages - m0, deliveries: deliveries - d0, claims: ((await claimsOf(urls)) - k0) / Math.max(1, deliveries - d0), connections: (connections - c0) / Math.max(1, deliveries - d0), perNode, user: sum('user'), system: sum('system'), writes: sum('writes'), idle, statements };
  } finally {
    sim?.kill('SIGINT');
    subscribers?.close();
    receiver.close();
    for (const n of nodes) await stop(n);
  }
}

/** Webhook claims the nodes made so far, from their metrics. */
async function claimsOf(urls: string[]): Promise<number> {
  let n = 0;
  for (const url of urls) {
    const res = await request(`${url}/metrics`, { headers: { authorization: `Bearer ${BENCH_KEY}` } });
    for (const m of (await res.body.text()).matchAll(/^svc_webhook_claims_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  }
  return n;
}

function row(what: string, o: Outcome): number {
  const delivered = o.messages + o.deliveries;
  const us = (o.cpu / delivered) * 1e6;
  log(
    `| ${what} | ${fmt(o.messages)} | ${fmt(o.deliveries)} (${fmt(o.claims, 2)} / ${fmt(o.connections, 2)}) | ${fmt(o.cpu, 2)} s (${o.perNode.map((c) => fmt(c, 1)).join(' + ')}) | ${fmt(o.user, 1)} / ${fmt(o.system, 1)} s | ${fmt(o.writes / delivered, 2)} | ${o.idle.map((c) => fmt(c, 1)).join(' + ')} | ${fmt(us, 2)} |`,
  );
  return us;
}

/** PostgreSQL statements per webhook delivery, both deployments side by side, the most called of either first. */
function statementsTable(cluster: Outcome, alone: Outcome): void {
  const per = (o: Outcome, calls: number) => calls / Math.max(1, o.deliveries);
  const total = (o: Outcome) => o.statements.reduce((a, st) => a + st.calls, 0);
  log(`\nPostgreSQL statements per webhook delivery while measured: three nodes ${fmt(per(cluster, total(cluster)), 2)}, one node ${fmt(per(alone, total(alone)), 2)}`);
  log('| statement | three nodes | one node |');
  log('|---|---|---|');
  const queries = [...new Set([...cluster.statements.slice(0, 8), ...alone.statements.slice(0, 8)].map((st) => st.query))];
  const callsOf = (o: Outcome, q: string) => o.statements.find((st) => st.query === q)?.calls ?? 0;
  queries.sort((x, y) => Math.max(per(cluster, callsOf(cluster, y)), per(alone, callsOf(alone, y))) - Math.max(per(cluster, callsOf(cluster, x)), per(alone, callsOf(alone, x))));
  for (const q of queries) log(`| \`${q.slice(0, 110).replaceAll('|', '/')}\` | ${fmt(per(cluster, callsOf(cluster, q)), 3)} | ${fmt(per(alone, callsOf(alone, q)), 3)} |`);
}

const b = await Backends.start();
try {
  log(`bench/cluster-overhead: svc simulate at ${SPEED}×, ${fmt(SUBSCRIBERS)} stream clients, ${ENDPOINTS} webhook endpoints (confirmed events); ${SECONDS} s measured after ${WARMUP} s`);
  log('| deployment | stream messages | webhook deliveries (claims / receiver connections each) | nodes CPU | user / system | write syscalls a message | idle, CPU ms/s a node | CPU µs a message delivered |');
  log('|---|---|---|---|---|---|---|---|');
  const clusterRun = await deployment(b, 3, b.databaseUrl, b.redisUrl);
  const cluster = row('three nodes, PostgreSQL + Redis', clusterRun);
  const aloneRun = await deployment(b, 1, await b.database('svc_alone'), '');
  const alone = row('one node alone, PostgreSQL', aloneRun);
  log(`\ncoordination overhead: ${fmt(cluster / alone, 2)}× the lone node's CPU per message delivered (goal ≤ 1.3)`);
  statementsTable(clusterRun, aloneRun);
} finally {
  await b.remove();
}
