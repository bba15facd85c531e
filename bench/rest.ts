// bench/rest: svc's REST API against a bare node:http server returning the same bytes.
// Run: node --import tsx bench/rest.ts   (each run starts from a copy of the archive imported once into bench/.out/pristine)
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { BENCH_KEY, ROOT, fmt, resetBenchData, startProcess, startSvc, stop } from './lib.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function load(url: string, headers: Record<string, string>) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers, pipelining: 1 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

async function main() {
  fs.mkdirSync(path.join(ROOT, 'bench/.out'), { recursive: true });
  await resetBenchData();
  const svc = await startSvc(18080);
  const headers = { authorization: `Bearer ${BENCH_KEY}` };
  const cases = [
    { name: 'GET /v1/competitions?limit=100', path: '/v1/competitions?limit=100', goal: 0.5 },
    { name: 'GET /v1/teams/:id', path: '/v1/teams/team:wc:BRA', goal: 0.7 },
  ];
  const rows: string[] = [];
  try {
    for (const c of cases) {
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
  } finally {
    await stop(svc);
  }
  const table = [
    `bench/rest — SQLite, ${CONNECTIONS} connections, ${DURATION} s per run, response bytes identical for both servers`,
    '| endpoint | svc req/s | svc p99 ms | bare node:http req/s | bare p99 ms | ratio | goal |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  process.stdout.write(`${table}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
