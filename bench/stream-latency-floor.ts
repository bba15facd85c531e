// bench/stream-latency-floor: the machine's floor for bench/stream's "1 subscriber" latency row.
// A bare node:http server (own process) that, on each POST, JSON-parses the body, sends one
// WebSocket frame (bare `ws`) to its subscriber and answers 202; the client is the same as
// bench/stream's (undici.request, one ws subscriber in the same process, 5 ms between samples),
// timing POST sent → frame received. svc's row adds auth, validation, consensus and a SQLite
// commit to exactly this.
// Run: node --import tsx bench/stream-latency-floor.ts   (BENCH_LATENCY_SAMPLES=500, BENCH_RUNS=3, BENCH_LATENCY_WARM=3000)
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { fmt } from './lib.js';
import { now, percentile } from './stream-common.js';

const SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 500);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** The same windows as bench/stream.ts's 1-subscriber latency: after 100 round trips, and after LATENCY_WARM. */
const WARMUP = 100;
const LATENCY_WARM = Number(process.env.BENCH_LATENCY_WARM ?? 3000);
/** And bench/stream.ts's spaced window: reports this far apart (0: none). */
const LATENCY_SPACED_MS = Number(process.env.BENCH_LATENCY_SPACED_MS ?? 250);
const LATENCY_SPACED_SAMPLES = Number(process.env.BENCH_LATENCY_SPACED_SAMPLES ?? 200);
const PORT = 18555;

function serve(): void {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const frame = Buffer.from(JSON.stringify({ id: 'evt_000000000001', type: 'score', tier: 'provisional', report: body }));
      for (const c of wss.clients) c.send(frame, { binary: false });
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  server.listen(PORT, '127.0.0.1', () => process.send?.('ready'));
}

interface Window {
  after: number;
  samples: number;
  pauseMs: number;
  p50: number;
  p99: number;
  max: number;
}

/** Both windows on one connection: SAMPLES round trips after WARMUP, then SAMPLES after LATENCY_WARM (when it is past the first window). */
async function measure(): Promise<Window[]> {
  const ws = new WebSocket(`ws://127.0.0.1:${PORT}/`, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let onFrame: (() => void) | null = null;
  ws.on('message', () => onFrame?.());
  let sent = 0;
  const roundTrip = async (pauseMs = 5): Promise<number> => {
    const arrived = new Promise<number>((resolve) => {
      onFrame = () => resolve(now());
    });
    const t0 = now();
    const res = await request(`http://127.0.0.1:${PORT}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ game_id: 'basketball_1', team: 'AAA', points: 2 }) });
    await res.body.text();
    const t = await arrived;
    sent++;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    return t - t0;
  };
  const window = async (after: number, samples = SAMPLES, pauseMs = 5): Promise<Window> => {
    while (sent < after) await roundTrip();
    const lat = new Float64Array(samples);
    for (let i = 0; i < lat.length; i++) lat[i] = await roundTrip(pauseMs);
    lat.sort();
    return { after, samples, pauseMs, p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat[lat.length - 1] };
  };
  const out = [await window(WARMUP)];
  if (LATENCY_WARM >= sent) out.push(await window(LATENCY_WARM));
  if (LATENCY_SPACED_MS > 0) out.push(await window(sent, LATENCY_SPACED_SAMPLES, LATENCY_SPACED_MS));
  ws.close();
  return out;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const child = fork(fileURLToPath(import.meta.url), ['server'], { execArgv: ['--import', 'tsx'] });
    try {
      await new Promise((resolve) => child.once('message', resolve));
      for (const w of await measure()) rows.push(`| ${run} | ${fmt(w.after + 1)}–${fmt(w.after + w.samples)} | ${w.pauseMs} | ${w.samples} | ${fmt(w.p50, 2)} | **${fmt(w.p99, 2)}** | ${fmt(w.max, 2)} |`);
    } finally {
      child.kill();
    }
  }
  process.stdout.write(
    [
      `bench/stream-latency-floor — bare node:http + ws, POST sent → frame received, 1 subscriber, ${SAMPLES} samples per window (the spaced one: ${LATENCY_SPACED_SAMPLES})`,
      '',
      '| run | round trips | ms apart | samples | p50 ms | p99 ms | max ms |',
      '|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n') + '\n',
  );
}

if (process.argv[2] === 'server') serve();
else
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
