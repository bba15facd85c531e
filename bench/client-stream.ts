// bench/client-stream: events/s decoded by @svc/client's stream against a bare `ws` client that
// only parses each frame, on the same svc in the same run (goal: ratio ≥ 0.8).
//
// Setup: one game gets 10,000 official plays (10,000 confirmed events); another game's fresh
// event is the `since` anchor (the replay window is 24 h). Each round, a client connects with
// `game=<that game>&since=<anchor>` and the server replays all 10,000 events as fast as the
// client reads: the time from connecting to the 10,000th decoded event is the client's cost
// plus the same server work for both. Rounds alternate bare / client; medians are compared.
//
// Run: node --import tsx bench/client-stream.ts        (ROUNDS=7 by default)
import { WebSocket } from 'ws';
import { Svc } from '../packages/client/src/index.js';
import { BENCH_KEY, fmt, resetBenchData, startSvc, stop } from './lib.js';

const PORT = 18_431;
const BASE = `http://127.0.0.1:${PORT}`;
const EVENTS = 10_000;
const ROUNDS = Number(process.env.ROUNDS ?? 7);

const period = { unit: 'half', num: 1, label: '1st half' };

async function setup(svc: Svc): Promise<{ game: string; anchor: string }> {
  const [a, b] = (await svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 2 })).data;
  await svc.plays.create(a.competition_id, { period, competitor_id: a.competitors[0].entity_id, event_type: 'goal', points: 1 });
  const anchor = (await svc.games.events(a.id)).data[0].id;
  const start = Date.now() - 2 * 3_600_000 - EVENTS * 31_000;
  const competitor = b.competitors[0].entity_id;
  for (let i = 0; i < EVENTS; i += 500) {
    const plays = Array.from({ length: 500 }, (_, j) => ({ period, competitor_id: competitor, event_type: 'goal', points: 1, ts: new Date(start + (i + j) * 31_000).toISOString() }));
    await svc.plays.create(b.competition_id, plays, { timeoutMs: 120_000 });
  }
  return { game: b.id, anchor };
}

/** Seconds for a bare ws client to parse all events. */
function bare(game: string, anchor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let n = 0;
    const ws = new WebSocket(`ws://127.0.0.1:${PORT}/v1/stream?game=${game}&since=${anchor}`, { headers: { authorization: `Bearer ${BENCH_KEY}` }, perMessageDeflate: false });
    ws.on('message', (data) => {
      const frame: { schema?: string } = JSON.parse(data.toString());
      if (frame.schema !== undefined && ++n === EVENTS) {
        const s = (performance.now() - t0) / 1000;
        ws.close();
        resolve(s);
      }
    });
    ws.on('error', reject);
  });
}

/** Seconds for @svc/client's stream to yield all events. */
async function client(svc: Svc, game: string, anchor: string): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  const stream = svc.stream({ game, since: anchor });
  for await (const ev of stream) {
    if (ev.schema && ++n === EVENTS) break;
  }
  stream.close();
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  await resetBenchData();
  const server = await startSvc(PORT);
  try {
    const svc = new Svc({ apiKey: BENCH_KEY, baseUrl: BASE });
    const { game, anchor } = await setup(svc);
    // Warm-up: JIT both paths and the server's replay query.
    await bare(game, anchor);
    await client(svc, game, anchor);
    const bareS: number[] = [];
    const clientS: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      bareS.push(await bare(game, anchor));
      clientS.push(await client(svc, game, anchor));
    }
    const bareRate = EVENTS / median(bareS);
    const clientRate = EVENTS / median(clientS);
    const rates = (xs: number[]) => xs.map((s) => fmt(EVENTS / s)).join(', ');
    console.log(`bench/client-stream — ${EVENTS} events replayed per round, ${ROUNDS} rounds each, alternating`);
    console.log('| client | median events/s | every round |');
    console.log('|---|---|---|');
    console.log(`| bare ws (JSON.parse per frame) | ${fmt(bareRate)} | ${rates(bareS)} |`);
    console.log(`| @svc/client svc.stream() | ${fmt(clientRate)} | ${rates(clientS)} |`);
    console.log(`ratio client / bare: ${fmt(clientRate / bareRate, 2)} (goal ≥ 0.8)`);
  } finally {
    await stop(server);
  }
}

await main();
