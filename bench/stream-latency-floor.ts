// bench/stream-latency-floor: the machine's floor for bench/stream's "1 subscriber" latency row.
// A bare node:http server (own process) that, on each POST, JSON-parses the body, sends one
// WebSocket frame (bare `ws`) to its subscriber and answers 202; the client is the same as
// bench/stream's (undici.request, one ws subscriber in the same process, 5 ms between samples),
// timing POST sent → frame received. svc's row adds auth, validation, consensus and a SQLite
// commit to exactly this.
// Run: node --import tsx bench/stream-latency-floor.ts   (BENCH_RUNS=3; the windows' knobs: LATENCY_WINDOWS in stream-common.ts)
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { fmt } from './lib.js';
import { LATENCY_WINDOWS, latencyWindows, now, percentile, roundTripAgent, type LatencyWindow } from './stream-common.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
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

/** bench/stream.ts's 1-subscriber windows (LATENCY_WINDOWS), on one connection. */
async function measure(): Promise<LatencyWindow<undefined>[]> {
  const ws = new WebSocket(`ws://127.0.0.1:${PORT}/`, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let onFrame: (() => void) | null = null;
  ws.on('message', () => onFrame?.());
  const roundTrip = async (): Promise<number> => {
    const arrived = new Promise<number>((resolve) => {
      onFrame = () => resolve(now());
    });
    const t0 = now();
    const res = await request(`http://127.0.0.1:${PORT}/`, { dispatcher: roundTripAgent, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ game_id: 'basketball_1', team: 'AAA', points: 2 }) });
    await res.body.text();
    return (await arrived) - t0;
  };
  const windows = await latencyWindows(roundTrip, true, () => () => undefined);
  ws.close();
  return windows;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const child = fork(fileURLToPath(import.meta.url), ['server'], { execArgv: ['--import', 'tsx'] });
    try {
      await new Promise((resolve) => child.once('message', resolve));
      for (const w of await measure()) {
        const n = w.sorted.length;
        rows.push(`| ${run} | ${fmt(w.after + 1)}–${fmt(w.after + n)} | ${w.pauseMs} | ${n} | ${fmt(percentile(w.sorted, 50), 2)} | **${fmt(percentile(w.sorted, 99), 2)}** | ${fmt(w.sorted[n - 1], 2)} |`);
      }
    } finally {
      child.kill();
    }
  }
  process.stdout.write(
    [
      `bench/stream-latency-floor — bare node:http + ws, POST sent → frame received, 1 subscriber, ${LATENCY_WINDOWS.samples} samples per window (the spaced one: ${LATENCY_WINDOWS.spacedSamples})`,
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
