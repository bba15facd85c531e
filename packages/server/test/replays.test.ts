import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReplayGame } from '../src/replays/close.js';
import { onSourceClock } from '../src/replays/plan.js';
import type { Replay as SourceReplay, ReplayPlay } from '../src/sim/replay.js';
import { createReplays } from '../src/replays/index.js';
import { expectError } from './contract.js';
import { auth, engines, testApp, until, type TestApp } from './helpers.js';

type Json = Record<string, unknown>;
interface ReplayJson {
  id: string;
  game_id: string;
  source_game_id: string;
  speed: number;
  status: string;
  reason: string | null;
  created_at: string;
}

/** The 2022 World Cup final: six goals (3–3), then penalties. */
const FINAL = 'soccer_21728';

describe('the replay clock', () => {
  const play = (ts: string, at: number): ReplayPlay => ({
    at, ts, period: { unit: 'half', num: 1, label: '1st half' }, role: 'home', competitorId: 'team:wc:ARG', team: 'ARG', playerId: null, eventType: 'goal', points: 1, clock: null,
  });
  const replay = (plays: ReplayPlay[]): SourceReplay => ({
    target: { competitionId: 'c', gameId: 'soccer_1', sport: 'soccer', date: '2026-01-01', home: { entityId: 'team:wc:ARG', code: 'ARG', players: [] }, away: { entityId: 'team:wc:FRA', code: 'FRA', players: [] } },
    sourceId: 'soccer_wc_21728',
    plays,
    duration: 0,
  });

  it('times plays by the source’s own timestamps from its start, at least 6 s apart', () => {
    const timed = onSourceClock(replay([play('2022-12-18T15:23:00.000Z', 1350), play('2022-12-18T15:36:00.000Z', 2130), play('2022-12-18T15:36:00.000Z', 2136)]), '2022-12-18T15:00:00.000Z');
    expect(timed.plays.map((p) => p.at)).toEqual([23 * 60, 36 * 60, 36 * 60 + 6]);
    expect(timed.duration).toBe(36 * 60 + 6);
  });

  it('without a start time, counts from the first play’s place in game time', () => {
    const timed = onSourceClock(replay([play('2022-12-18T15:23:00.000Z', 1350), play('2022-12-18T15:24:00.000Z', 1400)]), null);
    expect(timed.plays.map((p) => p.at)).toEqual([1350, 1410]);
  });
});

describe.each(engines())('sandbox replays (%s)', (engine) => {
  let t: TestApp;
  let owner: string;
  let other: string;

  beforeAll(async () => {
    t = await testApp({ engine });
    owner = await t.key({ products: ['live'] });
    other = await t.key({ products: ['live', 'archive', 'report', 'source'] });
  });
  afterAll(async () => t.close());

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string | null, body?: unknown) =>
    t.app.inject({ method, url, headers: key ? auth(key) : {}, ...(body !== undefined ? { payload: body as Json } : {}) });
  const create = async (body: Json, key = owner): Promise<ReplayJson> => {
    const res = await call('POST', '/v1/replays', key, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const replay = async (id: string, key = owner): Promise<ReplayJson> => (await call('GET', `/v1/replays/${id}`, key)).json().data;

  it('plays the 2022 final for its key alone: provisional then confirmed goals in order, the game live then final 3–3', async () => {
    // Endpoints of both keys (this app sends nothing: its deliveries stay pending, to be counted).
    const hook = async (key: string) => (await call('POST', '/v1/webhooks', key, { url: 'https://93.184.215.14/hooks/svc', tier: 'confirmed' })).json().data.id as string;
    const mine = await hook(owner);
    const theirs = await hook(other);
    const since = new Date().toISOString();
    const r = await create({ game_id: FINAL, speed: 600 });
    expect(r).toMatchObject({ source_game_id: FINAL, speed: 600, status: 'scheduled', reason: null });
    expect(r.id).toMatch(/^rpl_[A-Za-z0-9]{24}$/);
    expect(r.game_id).toMatch(/^soccer_\d+$/);
    expect(r.game_id).not.toBe(FINAL);

    await until(async () => (await replay(r.id)).status === 'running', 5_000, 'the replay to run');
    const live = (await call('GET', `/v1/games/${r.game_id}`, owner)).json().data;
    expect(live).toMatchObject({ id: r.game_id, status: 'live', league: 'wc', season: '2022' });

    await until(async () => (await replay(r.id)).status === 'finished', 30_000, 'the replay to finish');
    const game = (await call('GET', `/v1/games/${r.game_id}`, owner)).json().data;
    expect(game.status).toBe('final');
    expect(game.competitors.map((c: Json) => [c.entity_id, c.score])).toEqual([
      ['team:wc:ARG', 3],
      ['team:wc:FRA', 3],
    ]);
    const confirmed = (await call('GET', `/v1/games/${r.game_id}/events`, owner)).json().data as Json[];
    expect(confirmed.map((e) => e.team)).toEqual(['ARG', 'ARG', 'FRA', 'FRA', 'ARG', 'FRA']);
    for (const e of confirmed) {
      expect(e).toMatchObject({ type: 'score', tier: 'confirmed', game_id: r.game_id, points: 1, confidence: { agreement: 1, reporters: 3 } });
      expect(e.provisional_id).toMatch(/^evt_/);
    }
    const plays = (await call('GET', `/v1/competitions/${game.competition_id}/plays`, owner)).json().data as Json[];
    expect(plays.map((p) => p.event_type)).toEqual(['kickoff', 'penalty_goal', 'goal', 'penalty_goal', 'goal', 'goal', 'penalty_goal', 'shootout', 'final']);

    // For any other key, none of it exists.
    expectError(await call('GET', `/v1/games/${r.game_id}`, other), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await call('GET', `/v1/games/${r.game_id}/events`, other), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await call('GET', `/v1/competitions/${game.competition_id}`, other), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await call('GET', `/v1/competitions/${game.competition_id}/plays`, other), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await call('GET', `/v1/replays/${r.id}`, other), 404, 'not_found', { code: 'resource_not_found', param: 'id' });
    const today = (await call('GET', '/v1/games?date=today&sport=soccer&limit=1000', other)).json().data as Json[];
    expect(today.map((g) => g.id)).not.toContain(r.game_id);
    const ownToday = (await call('GET', '/v1/games?date=today&sport=soccer&limit=1000', owner)).json().data as Json[];
    expect(ownToday.map((g) => g.id)).toContain(r.game_id);
    expect((await call('GET', '/v1/replays', other)).json().data).toEqual([]);
    // Nor can it report on it or post its plays.
    expectError(await call('POST', '/v1/reports', other, { game_id: r.game_id, team: 'ARG', points: 1 }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });
    expectError(
      await call('POST', `/v1/competitions/${game.competition_id}/plays`, other, { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: 'team:wc:ARG', event_type: 'goal', points: 1 }),
      404,
      'not_found',
      { code: 'resource_not_found' },
    );
    // Nor replay it.
    expectError(await call('POST', '/v1/replays', other, { game_id: r.game_id }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });

    // Webhooks: the owner's endpoint has a delivery per goal, the other key's none, and a range replay of its own finds none either.
    const deliveries = async (key: string, ep: string) => (await call('GET', `/v1/webhooks/${ep}/deliveries?limit=100`, key)).json().data as Json[];
    const confirmedIds = confirmed.map((e) => e.id).sort();
    expect((await deliveries(owner, mine)).map((d) => d.event_id).sort()).toEqual(confirmedIds);
    expect(await deliveries(other, theirs)).toEqual([]);
    const range = { from: since, to: new Date(Date.now() + 1000).toISOString() };
    expect((await call('POST', `/v1/webhooks/${theirs}/replay`, other, range)).json().data.replayed).toBe(0);
    expect((await call('POST', `/v1/webhooks/${mine}/replay`, owner, range)).json().data.replayed).toBe(6);
  });

  it('is left out of its own key’s export, in all three entities alike: the export is the archive’s games (docs/replays.md)', async () => {
    const analyst = await t.key({ products: ['live', 'archive'] });
    const r = await create({ game_id: FINAL, speed: 600 }, analyst);
    const competitionId = (await call('GET', `/v1/games/${r.game_id}`, analyst)).json().data.competition_id as string;
    const lines = async (entity: string) => {
      const res = await call('GET', `/v1/export?league=wc&season=2022&entity=${entity}`, analyst);
      expect(res.statusCode, res.body).toBe(200);
      return res.body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
    };
    const competitions = await lines('competitions');
    expect(competitions.length).toBe(64);
    expect(competitions.map((c) => c.id)).not.toContain(competitionId);
    expect((await lines('events')).map((e) => e.game_id)).not.toContain(r.game_id);
    expect((await lines('plays')).map((p) => p.competition_id)).not.toContain(competitionId);
    // Read on its own, the replay's game is still its key's.
    expect((await call('GET', `/v1/competitions/${competitionId}`, analyst)).statusCode).toBe(200);
    // Stopped, so the tests after this one count their own replays only.
    expect((await call('DELETE', `/v1/replays/${r.id}`, analyst)).statusCode).toBe(200);
    await until(async () => t.services.replays.driver.running === 0, 10_000, 'the replay to stop');
  });

  it.runIf(engine === 'sqlite')('plays a basketball game: every scoring play confirmed once, in order, the final score the source’s', async () => {
    // Read with the archive product: the source is a past game.
    const source = (await call('GET', '/v1/games/basketball_33', other)).json().data;
    const plays = (await call('GET', `/v1/competitions/${source.competition_id}/plays?limit=1000`, other)).json().data as Json[];
    const scoring = plays.filter((p) => Number(p.points) > 0);
    const r = await create({ game_id: 'basketball_33', speed: 600 });
    await until(async () => (await replay(r.id)).status === 'finished', 60_000, 'the replay to finish');
    const game = (await call('GET', `/v1/games/${r.game_id}`, owner)).json().data;
    expect(game.competitors.map((c: Json) => c.score)).toEqual(source.competitors.map((c: Json) => c.score));
    const confirmed = (await call('GET', `/v1/games/${r.game_id}/events?limit=1000`, owner)).json().data as Json[];
    const code = (id: unknown) => String(id).split(':').pop();
    expect(confirmed.map((e) => `${String(e.team)}+${String(e.points)}`)).toEqual(scoring.map((p) => `${code(p.competitor_id)}+${String(p.points)}`));
    const retracted = await t.db.kysely.selectFrom('events').select('seq').where('game_id', '=', r.game_id).where('type', '=', 'score_retracted').execute();
    expect(retracted).toEqual([]);
  });

  it('lists a key’s replays newest first, a page at a time, and cancels one: its game ends at once', async () => {
    const a = await create({ game_id: FINAL, speed: 1 });
    const b = await create({ game_id: FINAL });
    expect(b.speed).toBe(60);
    const first = (await call('GET', '/v1/replays?limit=1', owner)).json();
    expect(first.data.map((x: ReplayJson) => x.id)).toEqual([b.id]);
    const second = (await call('GET', `/v1/replays?limit=1&cursor=${first.next_cursor}`, owner)).json();
    expect(second.data.map((x: ReplayJson) => x.id)).toEqual([a.id]);
    expectError(await call('GET', '/v1/replays?cursor=nonsense', owner), 400, 'invalid_request', { code: 'invalid_cursor' });

    for (const x of [a, b]) {
      await until(async () => (await replay(x.id)).status === 'running', 5_000, 'the replay to run');
      const res = await call('DELETE', `/v1/replays/${x.id}`, owner);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ id: x.id, status: 'cancelled', reason: 'cancelled by its key' });
      expect((await call('GET', `/v1/games/${x.game_id}`, owner)).json().data.status).toBe('final');
      // Cancelling again answers it as it is.
      expect((await call('DELETE', `/v1/replays/${x.id}`, owner)).json().data.status).toBe('cancelled');
    }
    expectError(await call('DELETE', `/v1/replays/${a.id}`, other), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await call('DELETE', '/v1/replays/rpl_nope', owner), 404, 'not_found', { code: 'resource_not_found' });
  });

  it('runs at most 5 replays per key: the 6th is a 409 replay_limit and stores nothing', async () => {
    const key = await t.key({ products: ['live'] });
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await create({ game_id: FINAL, speed: 1 }, key));
    const games = (await call('GET', '/v1/games?date=today&sport=soccer&limit=1000', key)).json().data.length;
    expectError(await call('POST', '/v1/replays', key, { game_id: FINAL }), 409, 'conflict', { code: 'replay_limit' });
    expect((await call('GET', '/v1/games?date=today&sport=soccer&limit=1000', key)).json().data.length).toBe(games);
    expect((await call('GET', '/v1/replays', key)).json().data).toHaveLength(5);
    // Another key has its own five.
    await call('DELETE', `/v1/replays/${(await create({ game_id: FINAL, speed: 1 }, owner)).id}`, owner);
    // A cancelled one frees its place.
    await call('DELETE', `/v1/replays/${five[0].id}`, key);
    const sixth = await create({ game_id: FINAL, speed: 1 }, key);
    for (const r of [...five.slice(1), sixth]) await call('DELETE', `/v1/replays/${r.id}`, key);
  });

  it('refuses bad input with the parameter named, and stores nothing', async () => {
    const before = (await call('GET', '/v1/replays', owner)).json().data.length;
    expectError(await call('POST', '/v1/replays', owner, { game_id: 'soccer_999999999' }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });
    expectError(await call('POST', '/v1/replays', owner, { game_id: 'nonsense' }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });
    expectError(await call('POST', '/v1/replays', owner, {}), 400, 'invalid_request', { code: 'missing_field', param: 'game_id' });
    for (const speed of [0, 601, 1.5, -1, '60']) {
      expectError(await call('POST', '/v1/replays', owner, { game_id: FINAL, speed }), 400, 'invalid_request', { code: 'invalid_field', param: 'speed' });
    }
    expectError(await call('POST', '/v1/replays', owner, { game_id: FINAL, extra: 1 }), 400, 'invalid_request', { code: 'unknown_field', param: 'extra' });
    // A game not final yet: today's scheduled games.
    const scheduled = (await call('GET', '/v1/games?status=scheduled&limit=1', other)).json().data as Json[];
    expect(scheduled).toHaveLength(1);
    expectError(await call('POST', '/v1/replays', owner, { game_id: scheduled[0].id }), 409, 'conflict', { code: 'game_not_final', param: 'game_id' });
    // Competitions that are not games (tennis, golf…) have no game id.
    expectError(await call('POST', '/v1/replays', owner, { game_id: 'tennis_1' }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });
    expect((await call('GET', '/v1/replays', owner)).json().data.length).toBe(before);
  });

  it.runIf(engine === 'sqlite')('two drivers playing one replay at once (a node stalled past its claim) still post each play and confirm each goal once', async () => {
    const r = await create({ game_id: FINAL, speed: 600 });
    await until(async () => (await replay(r.id)).status === 'running', 5_000, 'the replay to run');
    // The claim lapses as if its node stalled; a second driver takes it while the first goes on.
    await t.db.kysely.updateTable('replays').set({ driver: null, driver_until: null }).where('id', '=', r.id).execute();
    const second = createReplays({ db: t.db, config: t.services.config, clock: t.clock, nodeId: 'second', competitions: t.services.competitions, live: t.services.live });
    try {
      await second.driver.tick();
      expect(second.driver.running).toBe(1);
      expect(t.services.replays.driver.running).toBe(1);
      await until(async () => (await replay(r.id)).status === 'finished', 30_000, 'the replay to finish');
      await until(() => second.driver.running === 0 && t.services.replays.driver.running === 0, 5_000, 'both drivers to let go');
    } finally {
      await second.driver.stop();
    }
    const game = (await call('GET', `/v1/games/${r.game_id}`, owner)).json().data;
    expect(game.competitors.map((c: Json) => c.score)).toEqual([3, 3]);
    const plays = (await call('GET', `/v1/competitions/${game.competition_id}/plays`, owner)).json().data as Json[];
    expect(plays.map((p) => p.event_type)).toEqual(['kickoff', 'penalty_goal', 'goal', 'penalty_goal', 'goal', 'goal', 'penalty_goal', 'shootout', 'final']);
    const all = await t.db.kysely.selectFrom('events').select(['tier', 'team']).where('game_id', '=', r.game_id).orderBy('seq').execute();
    expect(all.map((e) => `${e.tier}:${e.team}`)).toEqual(['ARG', 'ARG', 'FRA', 'FRA', 'ARG', 'FRA'].flatMap((x) => [`provisional:${x}`, `confirmed:${x}`]));
  });

  it.runIf(engine === 'sqlite')('a node stopping mid-replay gives it up; the next driver resumes it after its last play, each goal confirmed once', async () => {
    const r = await create({ game_id: FINAL, speed: 600 });
    await until(async () => (await call('GET', `/v1/games/${r.game_id}/events`, owner)).json().data.length >= 2, 20_000, 'two goals');
    await t.services.replays.driver.stop();
    const stoppedAt = (await call('GET', `/v1/games/${r.game_id}/events`, owner)).json().data.length;
    expect((await replay(r.id)).status).toBe('running');
    // Another node (or this one restarted): its tick takes the replay over at once, the claim given up.
    const next = createReplays({ db: t.db, config: t.services.config, clock: t.clock, nodeId: 'next', competitions: t.services.competitions, live: t.services.live });
    try {
      await next.driver.tick();
      expect(next.driver.running).toBe(1);
      await until(async () => (await replay(r.id)).status === 'finished', 30_000, 'the resumed replay to finish');
    } finally {
      await next.driver.stop();
    }
    const confirmed = (await call('GET', `/v1/games/${r.game_id}/events`, owner)).json().data as Json[];
    expect(stoppedAt).toBeLessThan(6);
    expect(confirmed.map((e) => e.team)).toEqual(['ARG', 'ARG', 'FRA', 'FRA', 'ARG', 'FRA']);
    const all = await t.db.kysely.selectFrom('events').select(['tier', 'team']).where('game_id', '=', r.game_id).orderBy('seq').execute();
    expect(all.map((e) => `${e.tier}:${e.team}`)).toEqual(['ARG', 'ARG', 'FRA', 'FRA', 'ARG', 'FRA'].flatMap((x) => [`provisional:${x}`, `confirmed:${x}`]));
  });

  it.runIf(engine === 'sqlite')('a replay that cannot go on ends cancelled with its reason', async () => {
    const next = createReplays({ db: t.db, config: t.services.config, clock: t.clock, nodeId: 'broken', competitions: t.services.competitions, live: t.services.live });
    const key = await t.key({ products: ['live'] });
    // With this app's driver stopped, the replay waits, scheduled, for a driver to take it.
    await t.services.replays.driver.stop();
    const r = await create({ game_id: FINAL, speed: 1 }, key);
    expect((await replay(r.id, key)).status).toBe('scheduled');
    // Its game's teams are gone from under it; a driver taking it over cannot play it.
    const row = await t.db.kysely.selectFrom('replays').select(['competition_id']).where('id', '=', r.id).executeTakeFirstOrThrow();
    await t.db.kysely.updateTable('competitors').set({ role: 'gone' }).where('competition_id', '=', row.competition_id).execute();
    try {
      await next.driver.tick();
      await until(async () => (await replay(r.id, key)).status === 'cancelled', 10_000, 'the replay to end');
    } finally {
      await next.driver.stop();
    }
    expect((await replay(r.id, key)).reason).toMatch(/cannot be played/);
  });

  it.runIf(engine === 'sqlite')('a replay whose game is over already ends finished when a driver takes it, sending nothing more', async () => {
    await t.services.replays.driver.stop();
    const key = await t.key({ products: ['live'] });
    const r = await create({ game_id: FINAL, speed: 1 }, key);
    const row = await t.db.kysely.selectFrom('replays').select(['competition_id']).where('id', '=', r.id).executeTakeFirstOrThrow();
    // Its driver posted the final play and stopped before recording the end.
    await closeReplayGame(t.services.live.games, t.services.live.official, row.competition_id, 'test');
    const next = createReplays({ db: t.db, config: t.services.config, clock: t.clock, nodeId: 'late', competitions: t.services.competitions, live: t.services.live });
    try {
      await next.driver.tick();
      await until(async () => (await replay(r.id, key)).status === 'finished', 5_000, 'the replay to end');
    } finally {
      await next.driver.stop();
    }
    expect(await t.db.kysely.selectFrom('events').select('seq').where('game_id', '=', r.game_id).execute()).toEqual([]);
  });

  it('the README tour’s replay is one the API takes', async () => {
    const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');
    const tour = readme.slice(readme.indexOf('## A short tour'), readme.indexOf('Lists return'));
    const body = /-d '(\{[^']+\})' http:\/\/127\.0\.0\.1:8080\/v1\/replays/.exec(tour);
    expect(body).not.toBeNull();
    const r = await create(JSON.parse(body?.[1] ?? '{}'));
    expect(r).toMatchObject({ source_game_id: FINAL, speed: 120 });
    expect(tour).toContain(`svc -- replay ${FINAL} --speed 120`);
    await call('DELETE', `/v1/replays/${r.id}`, owner);
  });

  it('takes a sandbox key with the live product', async () => {
    for (const [method, url] of [['POST', '/v1/replays'], ['GET', '/v1/replays'], ['GET', '/v1/replays/rpl_x'], ['DELETE', '/v1/replays/rpl_x']] as const) {
      expectError(await call(method, url, null, method === 'POST' ? { game_id: FINAL } : undefined), 401, 'authentication_error', { code: 'missing_api_key' });
    }
    expectError(await call('POST', '/v1/replays', 'svc_test_nope', { game_id: FINAL }), 401, 'authentication_error', { code: 'invalid_api_key' });
    const archiveOnly = await t.key({ products: ['archive'] });
    for (const [method, url] of [['POST', '/v1/replays'], ['GET', '/v1/replays'], ['GET', '/v1/replays/rpl_x'], ['DELETE', '/v1/replays/rpl_x']] as const) {
      expectError(await call(method, url, archiveOnly, method === 'POST' ? { game_id: FINAL } : undefined), 403, 'permission_error', { code: 'product_not_in_plan' });
    }
    const basketballOnly = await t.key({ products: ['live'], sports: ['basketball'] });
    expectError(await call('POST', '/v1/replays', basketballOnly, { game_id: FINAL }), 403, 'permission_error', { code: 'sport_not_in_scope', param: 'game_id' });
  });
});

describe('sandbox replays in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ config: { env: 'production' } });
  });
  afterAll(async () => t.close());

  it('answer a production key 403 sandbox_only', async () => {
    const key = await t.key({ products: ['live'] });
    expect(key).toMatch(/^svc_live_/);
    for (const [method, url] of [['POST', '/v1/replays'], ['GET', '/v1/replays'], ['GET', '/v1/replays/rpl_x'], ['DELETE', '/v1/replays/rpl_x']] as const) {
      const res = await t.app.inject({ method, url, headers: auth(key), ...(method === 'POST' ? { payload: { game_id: FINAL } } : {}) });
      expectError(res, 403, 'permission_error', { code: 'sandbox_only' });
    }
  });
});

describe('a sandbox replay carries its source game’s status changes (docs/schedule.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  it('a suspension and the resumption of the source come in the replay’s game events, between the same plays', async () => {
    const owner = await t.key({ products: ['live'] });
    const source = await t.key({ products: ['source'] });
    const post = (url: string, key: string, body: unknown) => t.app.inject({ method: 'POST', url, headers: auth(key), payload: body as Json });
    const [c] = (await t.app.inject({ url: '/v1/competitions?sport=soccer&date=today&status=scheduled', headers: auth(owner) })).json().data as { id: string; competitors: { entity_id: string }[] }[];
    const gameId = `soccer_${c.id.split('_').pop()}`;
    const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
    // A source game that started a minute ago, was suspended between two goals (the second
    // stamped 40 s ahead, well clear of the suspension on the source's clock) and finished.
    expect((await post(`/v1/competitions/${c.id}/status`, source, { status: 'postponed' })).statusCode).toBe(200);
    expect((await post(`/v1/competitions/${c.id}/status`, source, { status: 'scheduled', start_time: at(0) })).statusCode).toBe(200);
    const play = (s: number, points: number, event_type: string) =>
      post(`/v1/competitions/${c.id}/plays`, source, { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: c.competitors[0].entity_id, event_type, points, ts: at(s) });
    expect((await play(10, 1, 'goal')).statusCode).toBe(201);
    expect((await post(`/v1/competitions/${c.id}/status`, source, { status: 'suspended', reason: 'Thunderstorm' })).statusCode).toBe(200);
    expect((await post(`/v1/competitions/${c.id}/status`, source, { status: 'live', reason: 'Play resumed' })).statusCode).toBe(200);
    expect((await play(100, 1, 'goal')).statusCode).toBe(201);
    expect((await play(101, 0, 'final')).statusCode).toBe(201);
    const res = await post('/v1/replays', owner, { game_id: gameId, speed: 60 });
    expect(res.statusCode, res.body).toBe(201);
    const replay = res.json().data as { id: string; game_id: string };
    await until(async () => (await t.app.inject({ url: `/v1/replays/${replay.id}`, headers: auth(owner) })).json().data.status === 'finished', 30_000, 'the replay to finish');
    const events = (await t.app.inject({ url: `/v1/games/${replay.game_id}/events`, headers: auth(owner) })).json().data as { type: string; status?: string; reason?: string | null; tier: string }[];
    const kinds = events.map((e) => (e.type === 'status' ? `${e.status}` : e.type));
    expect(kinds).toEqual(['score', 'suspended', 'live', 'score']);
    expect(events.find((e) => e.status === 'suspended')?.reason).toBe('Thunderstorm');
  });
});
