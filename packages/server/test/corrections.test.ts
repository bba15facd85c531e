import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate } from '../src/domain/clock.js';
import { expectError } from './contract.js';
import { auth, engines, listen, ManualClock, testApp, tmpDir, type TestApp } from './helpers.js';
import { SseClient } from './sse-client.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { connect, type StreamClient } from './ws-client.js';

/**
 * Corrections (docs/corrections.md): a confirmed score withdrawn by an official source, the
 * official final result withdrawing the crowd scores it cannot hold, and the crowd's own games
 * scored by their confirmed crowd scores and moved back by a correction. Real sockets for the
 * stream (WebSocket and server-sent events) and the webhook receiver, the real store on each engine.
 */

interface Game {
  id: string;
  competition_id: string;
  league: string;
  season: string;
  status: string;
  competitors: { entity_id: string; role: string; score: number }[];
}
interface Ev {
  id: string;
  type: string;
  tier: string;
  team: string;
  points: number;
  event_type: string;
  retracted_id?: string;
  provisional_id?: string;
}
interface Row {
  entity_id: string;
  played: number;
  won: number;
  scored: number;
  live: boolean;
}

const HALF1 = { unit: 'half', num: 1, label: '1st half' };
const FULLTIME = { unit: 'fulltime', num: 1, label: 'Full time' };
const code = (entityId: string) => entityId.slice(entityId.lastIndexOf(':') + 1);

describe.each(engines())('corrections on %s', (engine) => {
  let t: TestApp;
  let key: string;
  /**
   * Each game's crowd: three report keys of its own. Official data judges the crowd's votes
   * (docs/consensus.md "Truth from official data"): a crowd whose score the final result withdrew
   * is on probation afterwards, and could not confirm another game's score alone.
   */
  const crowds = new Map<string, string[]>();
  const crowdOf = async (g: Game): Promise<string[]> => {
    let keys = crowds.get(g.id);
    if (!keys) crowds.set(g.id, (keys = [await t.key({ products: ['report'] }), await t.key({ products: ['report'] }), await t.key({ products: ['report'] })]));
    return keys;
  };
  let base: { http: string; ws: string };
  let games: Game[];
  let basketball: Game[];
  let rx: Receiver;
  // Noon (UTC) of today: reports are taken on a game's own day, and the export serves a game once its day is over.
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));

  beforeAll(async () => {
    t = await testApp({ engine, clock, config: { webhookAllowPrivate: true } });
    key = await t.key();
    base = await listen(t);
    games = (await get('/v1/games?date=today&sport=soccer&status=scheduled&limit=1000')).json().data as Game[];
    basketball = (await get('/v1/games?date=today&sport=basketball&status=scheduled&limit=1000')).json().data as Game[];
    expect(games.length).toBeGreaterThanOrEqual(4);
    expect(basketball.length).toBeGreaterThanOrEqual(1);
    rx = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  const get = (url: string, k = key) => t.app.inject({ method: 'GET', url, headers: auth(k) });
  const post = (url: string, body: unknown, k: string | null = key) =>
    t.app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { ...(k ? auth(k) : {}), 'content-type': 'application/json' } });
  const plays = (g: Game, body: unknown, k: string | null = key) => post(`/v1/competitions/${g.competition_id}/plays`, body, k);
  const events = async (g: Game) => (await get(`/v1/games/${g.id}/events?limit=1000`)).json().data as Ev[];
  const scores = async (g: Game) => ((await get(`/v1/competitions/${g.competition_id}`)).json().data as Game).competitors.map((c) => c.score);
  const box = async (g: Game) => (await get(`/v1/competitions/${g.competition_id}/boxscore`)).json().data;
  const lineScore = async (g: Game) => (await box(g)).competitors.map((c: { score: number; periods: { points: number }[] }) => [c.score, c.periods.map((p) => p.points)]);
  const standingsRow = async (g: Game, entityId: string, extra = '') => {
    const tables = (await get(`/v1/standings?league=${g.league}&season=${encodeURIComponent(g.season)}${extra}`)).json().data as { rows: Row[] }[];
    return tables.flatMap((x) => x.rows).find((r) => r.entity_id === entityId);
  };
  const count = async (table: 'plays' | 'events' | 'changes' | 'webhook_deliveries') => Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  /** Three reporters (distinct keys) report the same score: quorum and full agreement, a confirmed crowd event. */
  const crowdScore = async (g: Game, team: string, clockText?: string) => {
    let last: { event_id: string; tier: string } | undefined;
    for (const r of await crowdOf(g)) {
      const res = await post('/v1/reports', { game_id: g.id, team, points: 1, event_type: 'goal', ...(clockText ? { clock: clockText } : {}) }, r);
      expect(res.statusCode, res.body).toBe(202);
      last = res.json().data[0];
    }
    expect(last?.tier).toBe('confirmed');
    return String(last?.event_id);
  };
  /** The change feed's cursor after its last change (a page without `since` starts at the oldest). */
  const changesHead = async () => {
    let cursor = '';
    for (;;) {
      const page = (await get(`/v1/changes?limit=1000${cursor ? `&since=${cursor}` : ''}`)).json();
      cursor = page.next_cursor;
      if (page.data.length === 0) return cursor;
    }
  };
  const side = (g: Game, role: string) => g.competitors.find((c) => c.role === role)?.entity_id ?? '';

  it('an official goal withdrawn after review: a confirmed score_retracted follows it on the stream (WebSocket and SSE), to webhooks, in the game’s events, the change feed and the export (NDJSON, CSV, Parquet); score, box score, standings and leaders move back', async () => {
    const g = games[0];
    const [home, away] = [side(g, 'home'), side(g, 'away')];
    const scorer = `player:${g.league}:${code(home).toLowerCase()}-striker`;
    const ws: StreamClient = await connect(`${base.ws}/v1/stream?game=${g.id}&tier=confirmed`, key);
    const sse = new SseClient(`${base.http}/v1/stream?game=${g.id}&tier=confirmed`, key);
    await ws.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    await sse.until((c) => c.of('subscribed').length > 0, 10_000, 'subscribed (SSE)');
    const hook = await post('/v1/webhooks', { url: `${rx.url}/`, tier: 'confirmed' });
    expect(hook.statusCode, hook.body).toBe(201);
    const since = await changesHead();
    const before = await standingsRow(g, home);

    expect((await plays(g, { plays: [{ period: HALF1, competitor_id: home, event_type: 'kickoff', points: 0 }, { period: HALF1, competitor_id: home, player_id: scorer, event_type: 'goal', points: 1, clock: "12'" }] })).statusCode).toBe(201);
    const goal = (await events(g)).find((e) => e.type === 'score');
    expect(goal).toMatchObject({ tier: 'confirmed', team: code(home), points: 1 });
    expect(await scores(g)).toEqual([1, 0]);
    expect((await standingsRow(g, home))?.scored).toBe((before?.scored ?? 0) + 1);
    expect(((await get(`/v1/leaders?league=${g.league}&season=${encodeURIComponent(g.season)}&limit=1000`)).json().data as { player_id: string }[]).some((l) => l.player_id === scorer)).toBe(true);

    // VAR: the goal is disallowed two minutes later.
    const res = await plays(g, { event_type: 'score_withdrawn', withdraws: goal?.id, period: HALF1, clock: "14'" });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toEqual([
      expect.objectContaining({ seq: 3, event_type: 'score_withdrawn', competitor_id: home, player_id: scorer, points: -1, state: { home: 0, away: 0 }, withdraws: goal?.id, retracted_id: goal?.id, schema: 'svc.play.v1' }),
    ]);

    // The game's events: the goal, then its correction naming it.
    const after = await events(g);
    const retractions = after.filter((e) => e.type === 'score_retracted');
    expect(retractions).toEqual([expect.objectContaining({ tier: 'confirmed', retracted_id: goal?.id, team: code(home), points: 1, event_type: 'score_withdrawn', confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 } })]);
    const fix = retractions[0];
    expect(fix.id > String(goal?.id)).toBe(true);

    // The stream, both ways, exactly once.
    await ws.until((c) => c.events().some((f) => f.id === fix.id), 10_000, 'the correction on the WebSocket');
    await sse.until((c) => c.events().some((m) => m.id === fix.id), 10_000, 'the correction on SSE');
    expect(ws.events().filter((f) => f.type === 'score_retracted')).toEqual([{ id: fix.id, type: 'score_retracted', tier: 'confirmed', game_id: g.id, team: code(home), points: 1, ts: expect.any(String), confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 }, retracted_id: goal?.id, schema: 'svc.event.v1' }]);
    expect(sse.events().filter((m) => m.event === 'score_retracted').map((m) => m.data.retracted_id)).toEqual([goal?.id]);
    ws.close();
    sse.close();

    // Webhooks: the goal and its correction, each once, signed like any event.
    await t.services.webhooks.dispatcher.runOnce();
    await rx.waitFor((r) => r.requests.some((q) => q.headers['x-svc-event-id'] === fix.id), 10_000, 'the correction’s delivery');
    const delivered = rx.requests.filter((q) => q.headers['x-svc-event-id'] === fix.id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].headers['x-svc-topic']).toBe('event.score_retracted');
    expect(JSON.parse(delivered[0].body)).toMatchObject({ type: 'score_retracted', tier: 'confirmed', retracted_id: goal?.id });
    // A range replay sends the correction again with the goal it corrects, an endpoint taking scores only just the goal.
    const range = { from: new Date(clock.now() - 60_000).toISOString(), to: new Date(clock.now() + 60_000).toISOString() };
    const replayed = async (id: string) => {
      const r = await post(`/v1/webhooks/${id}/replay`, range);
      expect(r.statusCode, r.body).toBe(202);
      const ids = r.json().data.delivery_ids as string[];
      return Promise.all(ids.map(async (d) => (await get(`/v1/webhooks/${id}/deliveries/${d}`)).json().data.event_id as string));
    };
    expect(await replayed(hook.json().data.id)).toEqual([goal?.id, fix.id]);
    const scoresOnly = await post('/v1/webhooks', { url: `${rx.url}/scores`, tier: 'confirmed', types: ['score'] });
    expect(await replayed(scoresOnly.json().data.id)).toEqual([goal?.id]);

    // The change feed: the correction as an event, and the competition it moved.
    const changes = (await get(`/v1/changes?since=${since}&limit=1000`)).json().data as { type: string; object_id: string; object: Record<string, unknown> }[];
    expect(changes.filter((c) => c.object_id === fix.id)).toEqual([expect.objectContaining({ type: 'event.created', object: expect.objectContaining({ retracted_id: goal?.id, tier: 'confirmed' }) })]);
    const lastUpdate = changes.filter((c) => c.type === 'competition.updated' && c.object_id === g.competition_id).at(-1);
    expect((lastUpdate?.object.competitors as { score: number }[]).map((c) => c.score)).toEqual([0, 0]);

    // Score, box score, standings and leaders are back where they were.
    expect(await scores(g)).toEqual([0, 0]);
    expect(await lineScore(g)).toEqual([[0, [0]], [0, [0]]]);
    expect((await box(g)).players).toEqual([]);
    expect((await standingsRow(g, home))?.scored).toBe(before?.scored ?? 0);
    expect((await standingsRow(g, home, '&tier=provisional'))?.scored).toBe(before?.scored ?? 0);
    expect(((await get(`/v1/leaders?league=${g.league}&season=${encodeURIComponent(g.season)}&limit=1000`)).json().data as { player_id: string }[]).some((l) => l.player_id === scorer)).toBe(false);

    // An away goal that stands, the final whistle; the next day the export holds the goal, its correction and the plays.
    expect((await plays(g, { plays: [{ period: HALF1, competitor_id: away, event_type: 'goal', points: 1, clock: "30'" }, { period: FULLTIME, competitor_id: home, event_type: 'final', points: 0 }] })).statusCode).toBe(201);
    expect(await scores(g)).toEqual([0, 1]);
    expect((await events(g)).filter((e) => e.type === 'score_retracted')).toHaveLength(1);
    clock.advance(24 * 3_600_000);
    try {
      const query = `league=${g.league}&season=${encodeURIComponent(g.season)}&from=${isoDate(clock.now() - 24 * 3_600_000)}`;
      const lines = (await get(`/v1/export?${query}`)).body.trim().split('\n').map((l) => JSON.parse(l) as Ev & { game_id: string });
      const mine = lines.filter((l) => l.game_id === g.id && l.type !== 'status');
      expect(mine.map((l) => [l.type, l.retracted_id ?? null])).toEqual([['score', null], ['score_retracted', goal?.id], ['score', null]]);
      const csv = (await get(`/v1/export?${query}&format=csv`)).body;
      expect(csv.split('\n').filter((l) => l.startsWith(`"${fix.id}"`) || l.startsWith(`${fix.id},`))).toHaveLength(1);
      const file = path.join(tmpDir('svc-corrections-'), `${engine}.parquet`);
      fs.writeFileSync(file, (await get(`/v1/export?${query}&format=parquet`)).rawPayload);
      const duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', threads: '1' });
      const conn = await duck.connect();
      const read = (await conn.runAndReadAll(`select type, tier, retracted_id from read_parquet('${file}') where id = '${fix.id}'`)).getRowObjectsJS();
      conn.closeSync();
      expect(read).toEqual([{ type: 'score_retracted', tier: 'confirmed', retracted_id: goal?.id }]);
      const playLines = (await get(`/v1/export?league=${g.league}&season=${encodeURIComponent(g.season)}&entity=plays&from=${isoDate(clock.now() - 24 * 3_600_000)}`)).body.trim().split('\n').map((l) => JSON.parse(l));
      expect(playLines.filter((p) => p.competition_id === g.competition_id).map((p) => p.event_type)).toEqual(['kickoff', 'goal', 'score_withdrawn', 'goal', 'final']);
    } finally {
      clock.advance(-24 * 3_600_000);
    }
  }, 60_000);

  it('a play withdrawn by its seq, in a batch of one; the crowd goal an official play matched goes with it', async () => {
    const g = games[1];
    const home = side(g, 'home');
    expect((await plays(g, { period: HALF1, competitor_id: home, event_type: 'kickoff', points: 0 })).statusCode).toBe(201);
    const crowd = await crowdScore(g, code(home), "20'");
    const goal = (await plays(g, { period: HALF1, competitor_id: home, event_type: 'goal', points: 1, clock: "20'" })).json().data[0];
    // The crowd was first: the official goal is the same play, no second event.
    expect((await events(g)).filter((e) => e.type === 'score').map((e) => e.id)).toEqual([crowd]);
    expect(await scores(g)).toEqual([1, 0]);
    // The crowd's records as the operator sees them: a withdrawal moves none (docs/corrections.md "The crowd's records").
    const records = async () => {
      const out = [];
      for (const k of await crowdOf(g)) out.push((await get(`/v1/reporters?key=${(await get('/v1/me', k)).json().data.id}`)).json().data);
      return out;
    };
    const judged = await records();
    for (const [r] of judged) expect(r).toMatchObject({ agreed: 1, official_confirmed: 1, official_contradicted: 0, flagged: false });
    const res = await plays(g, { plays: [{ event_type: 'score_withdrawn', withdraws: goal.seq }] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data[0]).toMatchObject({ event_type: 'score_withdrawn', withdraws: String(goal.seq), retracted_id: crowd, period: HALF1, points: -1 });
    expect((await events(g)).filter((e) => e.type === 'score_retracted').map((e) => e.retracted_id)).toEqual([crowd]);
    expect(await scores(g)).toEqual([0, 0]);
    expect(await records()).toEqual(judged);
    // Its provisional names the same score: withdrawn already.
    const provisional = (await t.services.events.after(0, 100, { games: [g.id], tier: 'provisional', types: ['score'] }))[0]?.event.id;
    expectError(await plays(g, { event_type: 'score_withdrawn', withdraws: provisional }), 409, 'conflict', { code: 'already_withdrawn', param: 'withdraws' });
  });

  it('the official final result withdraws the crowd scores it cannot hold, and keeps the ones it holds', async () => {
    const g = games[2];
    const [home, away] = [side(g, 'home'), side(g, 'away')];
    expect((await plays(g, { period: HALF1, competitor_id: home, event_type: 'kickoff', points: 0 })).statusCode).toBe(201);
    const held = await crowdScore(g, code(home), "10'");
    expect((await plays(g, { period: HALF1, competitor_id: home, event_type: 'goal', points: 1, clock: "10'" })).statusCode).toBe(201);
    clock.advance(60_000);
    // The crowd confirms an away goal that the official record never has.
    const invented = await crowdScore(g, code(away), "11'");
    const rowBefore = await standingsRow(g, away);
    expect(await scores(g)).toEqual([1, 0]);
    expect((await events(g)).filter((e) => e.type === 'score_retracted')).toEqual([]);
    const since = await changesHead();

    expect((await plays(g, { period: FULLTIME, competitor_id: home, event_type: 'final', points: 0 })).statusCode).toBe(201);
    const fixes = (await events(g)).filter((e) => e.type === 'score_retracted');
    expect(fixes).toEqual([expect.objectContaining({ tier: 'confirmed', retracted_id: invented, team: code(away), points: 1, event_type: 'final_contradicted' })]);
    expect(fixes.some((f) => f.retracted_id === held)).toBe(false);
    expect(await scores(g)).toEqual([1, 0]);
    const changes = (await get(`/v1/changes?since=${since}&limit=1000`)).json().data as { object_id: string }[];
    expect(changes.filter((c) => c.object_id === fixes[0].id)).toHaveLength(1);
    // Final: the standings count the official 1-0.
    expect((await standingsRow(g, away))).toMatchObject({ played: rowBefore?.played, scored: (rowBefore?.scored ?? 0) - 1, live: false });
    // The operator sees it in the crowd's records (docs/reporters.md): each voter had one score the
    // official record holds and one it does not, which flags it.
    for (const reporterKey of await crowdOf(g)) {
      const keyId = (await get('/v1/me', reporterKey)).json().data.id as string;
      expect((await get(`/v1/reporters?key=${keyId}`)).json().data).toEqual([
        expect.objectContaining({ key_id: keyId, reporter: null, official_confirmed: 1, official_contradicted: 1, flagged: true }),
      ]);
    }
  });

  it('the crowd’s own game: confirmed crowd scores move its score, box score and standings up; a correction moves them back; crowd scores after it still count', async () => {
    const g = games[3];
    const [home, away] = [side(g, 'home'), side(g, 'away')];
    const since = await changesHead();
    const first = await crowdScore(g, code(home), "30'");
    expect(await scores(g)).toEqual([1, 0]);
    expect(await lineScore(g)).toEqual([[1, [1]], [0, [0]]]);
    expect((await standingsRow(g, home))).toMatchObject({ live: true, scored: expect.any(Number) });
    const homeUp = (await standingsRow(g, home))?.scored ?? 0;
    const changes = (await get(`/v1/changes?since=${since}&limit=1000`)).json().data as { type: string; object_id: string; object: Game }[];
    expect(changes.filter((c) => c.type === 'competition.updated' && c.object_id === g.competition_id).at(-1)?.object.competitors.map((c) => c.score)).toEqual([1, 0]);

    const res = await plays(g, { event_type: 'score_withdrawn', withdraws: first, period: HALF1 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data[0]).toMatchObject({ competitor_id: home, points: -1, state: { home: 0, away: 0 }, retracted_id: first });
    expect(await scores(g)).toEqual([0, 0]);
    expect(await lineScore(g)).toEqual([[0, []], [0, []]]);
    expect((await standingsRow(g, home))?.scored).toBe(homeUp - 1);

    // Still the crowd's game: a correction is not an official source covering it.
    clock.advance(60_000);
    await crowdScore(g, code(away), "40'");
    clock.advance(60_000);
    await crowdScore(g, code(away), "47'");
    expect(await scores(g)).toEqual([0, 2]);
    expect(await lineScore(g)).toEqual([[0, [0, 0]], [2, [1, 1]]]);
    // Ended by its source's status: final at the crowd's 0-2.
    expect((await post(`/v1/competitions/${g.competition_id}/status`, { status: 'final' })).statusCode).toBe(200);
    expect((await standingsRow(g, away, '&live=false'))).toMatchObject({ live: false, won: expect.any(Number) });
    expect((await box(g)).winner).toBe(away);
  });

  it('refuses a correction naming nothing, another game’s event, something that is not a confirmed score or a score already withdrawn, one without `withdraws` or in a batch; stores nothing', async () => {
    const g = basketball[0];
    const other = games[0];
    const home = side(g, 'home');
    const q1 = { unit: 'quarter', num: 1, label: 'Q1' };
    expect((await plays(g, { period: q1, competitor_id: home, event_type: 'tipoff', points: 0 })).statusCode).toBe(201);
    const goal = (await plays(g, { period: q1, competitor_id: home, event_type: 'two_pointer', points: 2 })).json().data[0];
    const goalEvent = (await events(g)).find((e) => e.type === 'score');
    const otherEvent = (await events(other)).find((e) => e.type === 'score');
    const provisional = (await post('/v1/reports', { game_id: g.id, team: code(side(g, 'away')), points: 1 }, (await crowdOf(g))[0])).json().data[0].event_id;
    const w = (withdraws: unknown, extra: Record<string, unknown> = {}) => plays(g, { event_type: 'score_withdrawn', withdraws, ...extra });
    const before = [await count('plays'), await count('events'), await count('changes'), await count('webhook_deliveries')];

    expectError(await w('evt_000099999999'), 400, 'invalid_request', { code: 'withdraws_unknown', param: 'withdraws' });
    expectError(await w('nothing'), 400, 'invalid_request', { code: 'withdraws_unknown', param: 'withdraws' });
    expectError(await w(999), 400, 'invalid_request', { code: 'withdraws_unknown', param: 'withdraws' });
    expectError(await w(otherEvent?.id), 400, 'invalid_request', { code: 'withdraws_other_game', param: 'withdraws' });
    expectError(await w(goal.seq - 1), 400, 'invalid_request', { code: 'withdraws_not_a_score', param: 'withdraws' });
    expectError(await w(provisional), 400, 'invalid_request', { code: 'withdraws_not_a_score', param: 'withdraws' });
    expectError(await w(goalEvent?.id, { competitor_id: side(g, 'away') }), 400, 'invalid_request', { code: 'invalid_field', param: 'competitor_id' });
    expectError(await w(goalEvent?.id, { points: 3 }), 400, 'invalid_request', { code: 'invalid_field', param: 'points' });
    expectError(await plays(g, { event_type: 'score_withdrawn', period: HALF1 }), 400, 'invalid_request', { code: 'missing_field', param: 'withdraws' });
    expectError(await w(goalEvent?.id, { extra: 1 }), 400, 'invalid_request', { param: 'extra' });
    expectError(await w({ id: goalEvent?.id }), 400, 'invalid_request', { param: 'withdraws' });
    expectError(
      await plays(g, { plays: [{ period: q1, competitor_id: home, event_type: 'two_pointer', points: 2 }, { event_type: 'score_withdrawn', withdraws: goalEvent?.id }] }),
      400,
      'invalid_request',
      { code: 'withdrawal_not_alone', param: 'plays[1].event_type' },
    );
    expectError(await plays(g, { plays: [{ event_type: 'score_withdrawn' }] }), 400, 'invalid_request', { code: 'missing_field', param: 'plays[0].withdraws' });
    expect([await count('plays'), await count('events'), await count('changes'), await count('webhook_deliveries')]).toEqual(before);

    expect((await w(goalEvent?.id)).statusCode).toBe(201);
    const stored = [await count('plays'), await count('events'), await count('changes')];
    expectError(await w(goalEvent?.id), 409, 'conflict', { code: 'already_withdrawn', param: 'withdraws' });
    expectError(await w(goal.seq), 409, 'conflict', { code: 'already_withdrawn', param: 'withdraws' });
    const fix = (await events(g)).find((e) => e.type === 'score_retracted');
    expectError(await w(fix?.id), 400, 'invalid_request', { code: 'withdraws_not_a_score', param: 'withdraws' });
    expectError(await w(goal.seq + 1), 400, 'invalid_request', { code: 'withdraws_not_a_score', param: 'withdraws' });
    expect([await count('plays'), await count('events'), await count('changes')]).toEqual(stored);
    // A final competition takes no correction.
    expect((await plays(g, { period: FULLTIME, competitor_id: home, event_type: 'final', points: 0 })).statusCode).toBe(201);
    expectError(await w(goalEvent?.id), 409, 'conflict', { code: 'competition_final' });
  });

  it('needs a key with the source product and the game’s sport: 401, 403', async () => {
    const g = games[0];
    const body = { event_type: 'score_withdrawn', withdraws: 'evt_000000000001' };
    const before = await count('plays');
    expectError(await plays(g, body, null), 401, 'authentication_error', { code: 'missing_api_key' });
    expectError(await plays(g, body, 'svc_test_' + 'x'.repeat(32)), 401, 'authentication_error', { code: 'invalid_api_key' });
    expectError(await plays(g, body, await t.key({ products: ['live', 'report', 'archive'] })), 403, 'permission_error', { code: 'product_not_in_plan' });
    expectError(await plays(g, body, await t.key({ products: ['source'], sports: ['basketball'] })), 403, 'permission_error', { code: 'sport_not_in_scope' });
    expect(await count('plays')).toBe(before);
  });
});
