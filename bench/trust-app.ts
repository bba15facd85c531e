// bench/trust --app: the report that completes a quorum → the confirmed frame on the stream, on one
// node: a real `svc serve` (SQLite, the crowd-trust rules), three reporter keys, one WebSocket
// subscriber. Each sample is a new play: keys 1 and 2 report it, then the clock starts when key 3's
// POST is sent and stops when the subscriber receives the confirmed frame.
import { request } from 'undici';
import WebSocket from 'ws';
import { BENCH_KEY, fmt, resetBenchData, startSvc, stop } from './lib.js';
import { reporterKeys } from './reporter-keys.js';
import { now } from './stream-common.js';

const PORT = 18571;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const WARMUP = 30;
const BASE = `http://127.0.0.1:${PORT}`;

async function json(method: string, path: string, key: string, body?: unknown): Promise<unknown> {
  const res = await request(`${BASE}${path}`, {
    method: method === 'POST' ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

interface Game {
  id: string;
  competitors: { entity_id: string; role: string }[];
}

function isGames(x: unknown): x is { data: Game[] } {
  return typeof x === 'object' && x !== null && 'data' in x && Array.isArray(x.data);
}

export async function runApp(): Promise<void> {
  await resetBenchData();
  const keys = await reporterKeys(3, 'bench trust reporter');
  const svc = await startSvc(PORT);
  try {
    const games = await json('GET', '/v1/games?date=today&sport=basketball&limit=20', BENCH_KEY);
    if (!isGames(games)) throw new Error('no games list');
    const game = games.data.find((g) => g.competitors.length === 2);
    if (!game) throw new Error('no basketball game today');
    const gameId = `basketball_${game.id.split('_').pop()}`;
    const team = String(game.competitors[0].entity_id.split(':').pop());
    const ws = new WebSocket(`ws://127.0.0.1:${PORT}/v1/stream?tier=confirmed&game=${gameId}`, { headers: { authorization: `Bearer ${BENCH_KEY}` }, perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    let onConfirmed: ((at: number) => void) | null = null;
    ws.on('message', (raw: Buffer) => {
      const at = now();
      const m: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof m === 'object' && m !== null && 'tier' in m && m.tier === 'confirmed' && 'type' in m && m.type === 'score') onConfirmed?.(at);
    });
    const samples: number[] = [];
    const start = Date.now() - 5 * 3_600_000;
    for (let i = 0; i < SAMPLES + WARMUP; i++) {
      // A new play each time: observed 31 s after the last, so no report joins an earlier one.
      const report = { game_id: gameId, team, points: 2, observed_at: new Date(start + i * 31_000).toISOString() };
      await json('POST', '/v1/reports', keys[0], report);
      await json('POST', '/v1/reports', keys[1], report);
      const arrived = new Promise<number>((resolve) => (onConfirmed = resolve));
      const t0 = now();
      await json('POST', '/v1/reports', keys[2], report);
      const t1 = await arrived;
      onConfirmed = null;
      if (i >= WARMUP) samples.push(t1 - t0);
    }
    ws.close();
    samples.sort((a, b) => a - b);
    const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))];
    console.log(`bench/trust --app: one svc node (SQLite), ${fmt(samples.length)} plays after ${WARMUP}: the report completing the quorum → its confirmed frame`);
    console.log(`p50 ${fmt(q(0.5), 2)} ms, p99 ${fmt(q(0.99), 2)} ms, max ${fmt(samples[samples.length - 1], 2)} ms → ${q(0.99) <= 50 ? 'met' : 'NOT met'} (p99 ≤ 50 ms)`);
  } finally {
    await stop(svc);
  }
}
