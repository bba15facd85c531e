// bench/standings: GET /v1/standings of a 48-team tournament season (the 2026 World Cup, 12
// groups) and GET /v1/competitions/:id/boxscore of a live game, cold and warm, against reading the
// same competitions and plays through the REST list endpoints and computing the view in the
// client; printed as ratios. The simulator runs throughout (its writes empty the response cache).
// Run: node --import tsx bench/standings.ts
//   BENCH_COLD (requests with keys never seen before, default 200), BENCH_WARM (sequential
//   repeats, default 500), BENCH_DURATION (s of concurrent load, default 8), BENCH_CONNECTIONS (default 10).
import autocannon from 'autocannon';
import { Client } from 'undici';
import { KeyRepo, boxScore, keyPrefix, loadConfig, openDb, standings, type PlayFact } from '@svc/server';
import { BENCH_DATA, BENCH_KEY, fmt, resetBenchData, startSvc, stop } from './lib.js';

const PORT = 18_940 + Math.floor(Math.random() * 40);
const COLD = Number(process.env.BENCH_COLD ?? 200);
const WARM = Number(process.env.BENCH_WARM ?? 500);
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function keys(n: number): Promise<string[]> {
  const config = loadConfig({ SVC_DATA_DIR: BENCH_DATA, SVC_SIMULATOR: 'off' });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await repo.create({ name: `standings ${i}`, plan: 'internal', products: ['live', 'archive'], sports: null, leagues: null }, new Date())).key);
    return out;
  } finally {
    await db.close();
  }
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const summary = (xs: number[]) => `p50 ${fmt(pct(xs, 50), 2)} ms, p99 ${fmt(pct(xs, 99), 2)} ms`;

async function main(): Promise<void> {
  await resetBenchData();
  const coldKeys = await keys(COLD * 2 + 2);
  const svc = await startSvc(PORT, { SVC_SIMULATOR: 'on' });
  const client = new Client(`http://127.0.0.1:${PORT}`, { pipelining: 1 });
  const get = async (path: string, key: string, headers: Record<string, string> = {}): Promise<{ ms: number; status: number; body: string; etag: string | undefined }> => {
    const t0 = performance.now();
    const r = await client.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}`, ...headers } });
    const body = await r.body.text();
    const ms = performance.now() - t0;
    if (r.statusCode !== 200 && r.statusCode !== 304) throw new Error(`${path}: ${r.statusCode} ${body.slice(0, 200)}`);
    const etag = r.headers.etag;
    return { ms, status: r.statusCode, body, etag: typeof etag === 'string' ? etag : undefined };
  };
  try {
    const STANDINGS = '/v1/standings?league=wc&season=2026';
    const first = await get(STANDINGS, coldKeys[0]);
    const tables = JSON.parse(first.body).data as { rows: unknown[] }[];
    console.log(`standings of wc 2026: ${tables.length} groups, ${tables.reduce((s, t) => s + t.rows.length, 0)} teams; first request after start ${fmt(first.ms, 1)} ms`);

    // Cold: each request from a key the service has not seen (no response-cache entry).
    const cold: number[] = [];
    for (let i = 1; i <= COLD; i++) cold.push((await get(STANDINGS, coldKeys[i])).ms);
    // Warm: one key asking again and again (the response cache holds it between writes).
    const warm: number[] = [];
    for (let i = 0; i < WARM; i++) warm.push((await get(STANDINGS, BENCH_KEY)).ms);
    const etag = (await get(STANDINGS, BENCH_KEY)).etag ?? '';
    const notModified: number[] = [];
    let s304 = 0;
    for (let i = 0; i < WARM; i++) {
      const r = await get(STANDINGS, BENCH_KEY, { 'if-none-match': etag });
      notModified.push(r.ms);
      if (r.status === 304) s304++;
    }
    // The same through the list endpoint: the season's competitions, every page, tables computed in the client.
    const viaList: number[] = [];
    for (let i = 0; i < COLD; i++) {
      const t0 = performance.now();
      const r = await get('/v1/competitions?league=wc&season=2026&limit=1000', coldKeys[COLD + 1 + i]);
      const comps = JSON.parse(r.body).data as { id: string; group: string | null; status: string; competitors: { entity_id: string; score: number }[] }[];
      standings('soccer', comps.map((c) => ({ id: c.id, group: c.group, status: c.status, sides: c.competitors })));
      viaList.push(performance.now() - t0);
    }
    console.log(`standings cold (new key each): ${summary(cold)}`);
    console.log(`standings warm (same key):     ${summary(warm)}`);
    console.log(`standings If-None-Match:       ${summary(notModified)} (${s304}/${WARM} answered 304)`);
    console.log(`REST list + client tables:     ${summary(viaList)}`);
    console.log(`ratio list÷standings, p50: cold ${fmt(pct(viaList, 50) / pct(cold, 50), 2)}, warm ${fmt(pct(viaList, 50) / pct(warm, 50), 2)}`);

    // Concurrent load on the standings while the simulator writes.
    const load = await autocannon({ url: `http://127.0.0.1:${PORT}${STANDINGS}`, connections: CONNECTIONS, duration: DURATION, headers: { authorization: `Bearer ${BENCH_KEY}` } });
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`load: ${load.non2xx} non-2xx, ${load.errors} errors`);
    console.log(`standings under load, ${CONNECTIONS} connections, ${DURATION} s, simulator on: ${fmt(load.requests.average)} req/s, p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms`);

    // A live game: a scheduled basketball game made live by 160 official plays.
    const scheduled = JSON.parse((await get('/v1/competitions?league=sbl&status=scheduled&limit=1', BENCH_KEY)).body).data[0] as { id: string; competitors: { entity_id: string }[] };
    const [home, away] = scheduled.competitors.map((c) => c.entity_id);
    const plays = Array.from({ length: 160 }, (_, i) => ({
      period: { unit: 'quarter', num: 1 + Math.floor(i / 45), label: `Q${1 + Math.floor(i / 45)}` },
      competitor_id: i % 2 === 0 ? home : away,
      player_id: `player:sbl:bench-${i % 10}`,
      event_type: i % 3 === 0 ? 'three_pointer' : 'two_pointer',
      points: i % 3 === 0 ? 3 : 2,
    }));
    const posted = await client.request({ method: 'POST', path: `/v1/competitions/${scheduled.id}/plays`, headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ plays }) });
    if (posted.statusCode !== 201) throw new Error(`plays: ${posted.statusCode} ${await posted.body.text()}`);
    await posted.body.text();
    const BOX = `/v1/competitions/${scheduled.id}/boxscore`;
    const boxCold: number[] = [];
    const boxWarm: number[] = [];
    const boxList: number[] = [];
    for (let i = 0; i < COLD; i++) boxCold.push((await get(BOX, coldKeys[i + 1])).ms);
    for (let i = 0; i < WARM; i++) boxWarm.push((await get(BOX, BENCH_KEY)).ms);
    for (let i = 0; i < COLD; i++) {
      const k = coldKeys[COLD + 1 + i];
      const t0 = performance.now();
      const c = JSON.parse((await get(`/v1/competitions/${scheduled.id}`, k)).body).data;
      const all: PlayFact[] = [];
      let cursor: string | null = null;
      do {
        const page = JSON.parse((await get(`/v1/competitions/${scheduled.id}/plays?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, k)).body);
        all.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor);
      boxScore({ competition_id: c.id, sport: c.sport, status: c.status, competitors: c.competitors, start: c.start_time ?? c.date }, all);
      boxList.push(performance.now() - t0);
    }
    console.log(`box score of a live game (160 plays) cold: ${summary(boxCold)}`);
    console.log(`box score warm:                              ${summary(boxWarm)}`);
    console.log(`REST get + plays + client box score:         ${summary(boxList)}`);
    // Every answer computed afresh: a play lands before each request, so no memo or cache holds.
    const recomputed: number[] = [];
    const moreBox: number[] = [];
    for (let i = 0; i < Math.min(COLD, 100); i++) {
      const one = await client.request({
        method: 'POST',
        path: `/v1/competitions/${scheduled.id}/plays`,
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ period: { unit: 'quarter', num: 4, label: 'Q4' }, competitor_id: home, player_id: 'player:sbl:bench-0', event_type: 'free_throw', points: 1 }),
      });
      await one.body.text();
      recomputed.push((await get(STANDINGS, coldKeys[i + 1])).ms);
      moreBox.push((await get(BOX, coldKeys[COLD + 1 + i])).ms);
    }
    console.log(`standings recomputed (a play before each): ${summary(recomputed)}`);
    console.log(`box score recomputed (a play before each): ${summary(moreBox)}`);
    console.log(`ratio list÷boxscore, p50: cold ${fmt(pct(boxList, 50) / pct(boxCold, 50), 2)}, warm ${fmt(pct(boxList, 50) / pct(boxWarm, 50), 2)}`);
  } finally {
    await client.close();
    await stop(svc);
  }
}

await main();
