// bench/cluster-overhead: what coordination costs the nodes of a cluster. The same live load on
// three compiled nodes (PostgreSQL + Redis of the bench's own) and on one node alone (the same
// PostgreSQL, no Redis): `svc simulate` at BENCH_SPEED× posting to the first node,
// BENCH_SUBSCRIBERS stream clients spread over the nodes, BENCH_ENDPOINTS webhook endpoints
// (confirmed events) on a local receiver. After a warm-up, for BENCH_SECONDS, the nodes' CPU (/proc) per message delivered
// (stream messages received plus webhook deliveries received); the cluster's figure ÷ the lone
// node's is the coordination overhead (goal ≤ 1.3). The simulator's load is random, not replayed:
// what is compared is CPU per unit delivered, not totals.
// Run: npm run build && node --import tsx bench/cluster-overhead.ts
//   (BENCH_SPEED=60 BENCH_SUBSCRIBERS=3000 BENCH_ENDPOINTS=200 BENCH_SECONDS=60 BENCH_WARMUP=15)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { request } from 'undici';
import { BENCH_DATA, BENCH_KEY, ROOT, fmt, resetBenchData, stop } from './lib.js';
import { Backends, cpuOf, freePort, sleep, startNode, Subscribers } from './cluster-parts.js';

const SPEED = Number(process.env.BENCH_SPEED ?? 60);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 3000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 15);

const log = (s: string) => process.stdout.write(`${s}\n`);

interface Outcome {
  nodes: number;
  cpu: number;
  messages: number;
  deliveries: number;
  perNode: number[];
}

function simulate(url: string, databaseUrl: string): ChildProcess {
  return spawn(process.execPath, ['--conditions=svc-compiled', 'packages/server/dist/main.js', 'simulate', '--url', url, '--speed', String(SPEED)], {
    cwd: ROOT,
    env: { ...process.env, SVC_DATA_DIR: BENCH_DATA, SVC_DATABASE_URL: databaseUrl, SVC_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
}

async function deployment(b: Backends, count: number, databaseUrl: string, redisUrl: string): Promise<Outcome> {
  await resetBenchData();
  const nodes: ChildProcess[] = [];
  let deliveries = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      deliveries += 1;
      res.writeHead(200).end();
    });
  });
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
    subscribers = await Subscribers.open(urls, SUBSCRIBERS);
    sim = simulate(urls[0] ?? '', databaseUrl);
    await sleep(WARMUP * 1000);
    const cpu0 = nodes.map((n) => cpuOf(n.pid ?? 0));
    const [m0, d0] = [subscribers.messages, deliveries];
    await sleep(SECONDS * 1000);
    const perNode = nodes.map((n, i) => cpuOf(n.pid ?? 0) - (cpu0[i] ?? 0));
    return { nodes: count, cpu: perNode.reduce((a, c) => a + c, 0), messages: subscribers.messages - m0, deliveries: deliveries - d0, perNode };
  } finally {
    sim?.kill('SIGINT');
    subscribers?.close();
    receiver.close();
    for (const n of nodes) await stop(n);
  }
}

function row(what: string, o: Outcome): number {
  const delivered = o.messages + o.deliveries;
  const us = (o.cpu / delivered) * 1e6;
  log(`| ${what} | ${fmt(o.messages)} | ${fmt(o.deliveries)} | ${fmt(o.cpu, 2)} s (${o.perNode.map((c) => fmt(c, 1)).join(' + ')}) | ${fmt(us, 2)} |`);
  return us;
}

const b = await Backends.start();
try {
  log(`bench/cluster-overhead: svc simulate at ${SPEED}×, ${fmt(SUBSCRIBERS)} stream clients, ${ENDPOINTS} webhook endpoints (confirmed events); ${SECONDS} s measured after ${WARMUP} s`);
  log('| deployment | stream messages | webhook deliveries | nodes CPU | CPU µs a message delivered |');
  log('|---|---|---|---|---|');
  const cluster = row('three nodes, PostgreSQL + Redis', await deployment(b, 3, b.databaseUrl, b.redisUrl));
  const alone = row('one node alone, PostgreSQL', await deployment(b, 1, await b.database('svc_alone'), ''));
  log(`\ncoordination overhead: ${fmt(cluster / alone, 2)}× the lone node's CPU per message delivered (goal ≤ 1.3)`);
} finally {
  await b.remove();
}
