// bench/changes: the change feed's polling cost at 1,000 followers long-polling one node
// (docs/changes.md). `svc serve` runs as its own process on the bench archive; this process holds
// BENCH_FOLLOWERS long polls (`GET /v1/changes?since=…&wait=25`) open at once, each re-polling
// with its next_cursor as soon as it is answered, as `changes.follow()` does. Phases:
//   idle     nobody changes anything for BENCH_IDLE_S: the server's CPU while every follower waits;
//   changes  one status change every BENCH_EVERY_MS, BENCH_CHANGES times: how long after the POST
//            each follower has the change (p50/p99/max over every follower and change), and the
//            server's CPU per change delivered to all of them.
// Server CPU is read from /proc/<pid>/stat (user + system), so the bench's own work is not in it.
// Run: node --import tsx bench/changes.ts   (BENCH_FOLLOWERS=1000 BENCH_IDLE_S=10 BENCH_CHANGES=20 BENCH_EVERY_MS=1000)
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { BENCH_KEY, fmt, resetBenchData, startSvc, stop } from './lib.js';

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 1000);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
const EVERY_MS = Number(process.env.BENCH_EVERY_MS ?? 1000);
const PORT = Number(process.env.BENCH_PORT ?? 18_741);
const BASE = `http://127.0.0.1:${PORT}`;
const log = (line: string) => process.stderr.write(`[bench/changes] ${line}\n`);

const agent = new Agent({ connections: FOLLOWERS + 16, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
const auth = { authorization: `Bearer ${BENCH_KEY}` };

async function getJson<T>(path: string): Promise<T> {
  const res = await request(`${BASE}${path}`, { dispatcher: agent, headers: auth });
  const body = (await res.body.json()) as T;
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(body)}`);
  return body;
}

async function post(path: string, body: unknown): Promise<number> {
  const res = await request(`${BASE}${path}`, { method: 'POST', dispatcher: agent, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.body.dump();
  return res.statusCode;
}

/** CLK_TCK is 100 on Linux: one tick of /proc/<pid>/stat is 10 ms. */
const TICK_MS = 10;
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

interface ChangeOut {
  id: string;
  type: string;
  object: { type?: string; game_id?: string; status?: string };
}

async function main(): Promise<void> {
  await resetBenchData();
  const child = await startSvc(PORT);
  const pid = child.pid;
  if (pid === undefined) throw new Error('no server pid');
  try {
    const games = (await getJson<{ data: { id: string; start_time: string | null }[] }>('/v1/competitions?sport=soccer&status=scheduled&limit=50')).data;
    const start = (await getJson<{ next_cursor: string }>('/v1/changes?limit=1000')).next_cursor;
    let stopping = false;
    let polls = 0;
    // When each follower saw each change id.
    const seenAt = new Map<string, number[]>();
    const followers = Array.from({ length: FOLLOWERS }, () => follow().catch((err: unknown) => {
      if (!stopping) throw err;
    }));
    async function follow(): Promise<void> {
      let cursor = start;
      while (!stopping) {
        const res = await request(`${BASE}/v1/changes?since=${cursor}&wait=25&types=event.created`, { dispatcher: agent, headers: auth });
        const page = (await res.body.json()) as { data: ChangeOut[]; next_cursor: string };
        polls++;
        const now = performance.now();
        for (const c of page.data) {
          let list = seenAt.get(c.id);
          if (!list) seenAt.set(c.id, (list = []));
          list.push(now);
        }
        cursor = page.next_cursor;
      }
    }
    // Let every follower's first poll arrive and settle.
    await new Promise((r) => setTimeout(r, 3000));
    const p0 = polls;
    const idle0 = cpuMs(pid);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idleCpu = cpuMs(pid) - idle0;
    const idlePolls = polls - p0;
    log(`idle: ${FOLLOWERS} long polls open for ${IDLE_S} s: server CPU ${fmt(idleCpu)} ms (${fmt((idleCpu / (IDLE_S * 1000)) * 100, 1)} % of a core), ${idlePolls} answers`);

    const sentAt: { id?: string; at: number }[] = [];
    const c0 = cpuMs(pid);
    const t0 = performance.now();
    for (let i = 0; i < CHANGES; i++) {
      const g = games[i % games.length];
      const body = Math.floor(i / games.length) % 2 === 0 ? { status: 'postponed', reason: 'bench' } : { status: 'scheduled', start_time: new Date(Date.now() + 86_400_000).toISOString() };
      const at = performance.now();
      const status = await post(`/v1/competitions/${g.id}/status`, body);
      if (status !== 200) throw new Error(`status change answered ${status}`);
      sentAt.push({ at });
      await new Promise((r) => setTimeout(r, EVERY_MS));
    }
    // Wait for the last deliveries.
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline && [...seenAt.values()].filter((v) => v.length >= FOLLOWERS).length < CHANGES) await new Promise((r) => setTimeout(r, 100));
    const changeCpu = cpuMs(pid) - c0;
    const elapsed = performance.now() - t0;
    // Changes in feed order are the sends in order.
    const ids = [...seenAt.keys()].sort();
    const lat: number[] = [];
    let complete = 0;
    ids.forEach((id, i) => {
      const sent = sentAt[i]?.at;
      const seen = seenAt.get(id) ?? [];
      if (seen.length >= FOLLOWERS) complete++;
      if (sent !== undefined) for (const t of seen) lat.push(t - sent);
    });
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
    log(
      `changes: ${CHANGES} status changes, one per ${EVERY_MS} ms, to ${FOLLOWERS} followers: ${complete}/${CHANGES} reached every follower; ` +
        `POST → follower has it p50 ${fmt(q(0.5))} ms, p99 ${fmt(q(0.99))} ms, max ${fmt(lat[lat.length - 1] ?? NaN)} ms; ` +
        `server CPU ${fmt(changeCpu)} ms over ${fmt(elapsed / 1000, 1)} s = ${fmt(changeCpu / CHANGES, 1)} ms per change (${fmt((changeCpu / CHANGES / FOLLOWERS) * 1000, 1)} µs per follower answered)`,
    );
    stopping = true;
    void followers;
  } finally {
    await stop(child);
    await agent.destroy().catch(() => undefined);
  }
}

await main();
process.exit(0);
