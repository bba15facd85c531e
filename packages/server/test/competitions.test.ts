import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, engines, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';

describe.each(engines())('competitions and games on %s', (engine) => {
  let t: TestApp;
  let key: string;
  let liveOnly: string;
  let archiveOnly: string;
  let tennisOnly: string;
  let reportOnly: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key();
    liveOnly = await t.key({ products: ['live'] });
    archiveOnly = await t.key({ products: ['archive'] });
    tennisOnly = await t.key({ sports: ['tennis'] });
    reportOnly = await t.key({ products: ['report'] });
  });
  afterAll(async () => t.close());
  const get = (url: string, k: string | null = key) => t.app.inject({ method: 'GET', url, headers: k ? auth(k) : {} });

  describe('GET /v1/competitions', () => {
    it('lists the 2022 World Cup in date order with two competitors each', async () => {
      const { data, next_cursor } = (await get('/v1/competitions?league=wc&season=2022&limit=1000')).json();
      expect(next_cursor).toBeNull();
      expect(data).toHaveLength(64);
      const dates = data.map((c: { date: string }) => c.date);
      expect([...dates].sort()).toEqual(dates);
      for (const c of data) {
        expect(c.id).toMatch(/^soccer_wc_\d+$/);
        expect(c).toMatchObject({ sport: 'soccer', league: 'wc', season: '2022', status: 'final' });
        expect(c.competitors.map((x: { role: string }) => x.role)).toEqual(['home', 'away']);
      }
      const final = data.find((c: { date: string }) => c.date === '2022-12-18');
      expect(final.competitors.map((x: { entity_id: string; score: number }) => [x.entity_id, x.score])).toEqual([
        ['team:wc:ARG', 3],
        ['team:wc:FRA', 3],
      ]);
    });
    it('filters by team, player, date, status and sport', async () => {
      const bra = (await get('/v1/competitions?team=team:wc:BRA&season=wc_2014')).json();
      expect(bra.data).toHaveLength(7);
      const day = (await get('/v1/competitions?date=2022-12-18&league=wc')).json();
      expect(day.data).toHaveLength(1);
      const today = (await get('/v1/competitions?date=today&limit=1000')).json();
      const sports = new Set(today.data.map((c: { sport: string }) => c.sport));
      expect([...sports].sort()).toEqual(['basketball', 'golf', 'mma', 'soccer', 'tennis']);
      const golf = today.data.find((c: { sport: string }) => c.sport === 'golf');
      expect(golf.competitors.length).toBeGreaterThan(2);
      expect(golf.competitors.every((x: { entity_type: string }) => x.entity_type === 'player')).toBe(true);
      const sched = (await get('/v1/competitions?status=scheduled&sport=tennis&limit=5')).json();
      expect(sched.data.every((c: { status: string }) => c.status === 'scheduled')).toBe(true);
      const scorer = (await get('/v1/players?search=Mario%20G%C3%B6tze&league=wc')).json().data[0];
      const withPlayer = (await get(`/v1/competitions?player=${scorer.id}`)).json();
      expect(withPlayer.data.some((c: { date: string }) => c.date === '2014-07-13')).toBe(true);
    });
    it('rejects bad filters naming the parameter', async () => {
      expectError(await get('/v1/competitions?date=2022-02-30'), 400, 'invalid_request', { param: 'date' });
      expectError(await get('/v1/competitions?date=yesterday'), 400, 'invalid_request', { param: 'date' });
      expectError(await get('/v1/competitions?status=finished'), 400, 'invalid_request', { param: 'status' });
      expectError(await get('/v1/competitions?team=brazil'), 400, 'invalid_request', { param: 'team' });
      expectError(await get('/v1/competitions?player=x'), 400, 'invalid_request', { param: 'player' });
      expectError(await get('/v1/competitions?limit=abc'), 400, 'invalid_request', { param: 'limit' });
    });
    it('keeps to the key’s scope', async () => {
      expectError(await get('/v1/competitions', null), 401, 'authentication_error');
      expectError(await get('/v1/competitions?sport=soccer', tennisOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      const mine = (await get('/v1/competitions?limit=200', tennisOnly)).json();
      expect(mine.data.length).toBeGreaterThan(0);
      expect(mine.data.every((c: { sport: string }) => c.sport === 'tennis')).toBe(true);
    });
  });

  describe('GET /v1/competitions/:id and /plays', () => {
    it('returns the competition and its play-by-play explaining the score', async () => {
      const final = (await get('/v1/competitions?date=2022-12-18&league=wc')).json().data[0];
      const one = await get(`/v1/competitions/${final.id}`);
      expect(one.statusCode).toBe(200);
      expect(one.json().data).toEqual(final);
      const plays = (await get(`/v1/competitions/${final.id}/plays`)).json().data;
      const goals = plays.filter((p: { points: number; event_type: string }) => p.points > 0);
      expect(goals).toHaveLength(6);
      expect(plays.map((p: { seq: number }) => p.seq)).toEqual(plays.map((_: unknown, i: number) => i + 1));
      expect(plays.some((p: { event_type: string }) => p.event_type === 'shootout')).toBe(true);
      const last = plays[plays.length - 1];
      expect(last).toMatchObject({ event_type: 'final', schema: 'svc.play.v1', state: { home: 3, away: 3 } });
      expect(plays.some((p: { period: { unit: string } }) => p.period.unit === 'extra_time')).toBe(true);
    });
    it('404s unknown ids and 403s without the archive product or out of scope', async () => {
      expectError(await get('/v1/competitions/soccer_wc_999999'), 404, 'not_found');
      expectError(await get('/v1/competitions/soccer_wc_999999/plays'), 404, 'not_found');
      const final = (await get('/v1/competitions?date=2022-12-18&league=wc')).json().data[0];
      expectError(await get(`/v1/competitions/${final.id}/plays`, liveOnly), 403, 'permission_error', { code: 'product_not_in_plan' });
      expect((await get(`/v1/competitions/${final.id}/plays`, archiveOnly)).statusCode).toBe(200);
      expectError(await get(`/v1/competitions/${final.id}`, tennisOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      expectError(await get(`/v1/competitions/${final.id}/plays`, tennisOnly), 403, 'permission_error');
      expectError(await get(`/v1/competitions/${final.id}/plays?limit=0`), 400, 'invalid_request', { param: 'limit' });
    });
  });

  describe('GET /v1/games', () => {
    it('lists team-sport games with eligibility', async () => {
      const res = (await get('/v1/games?date=today&limit=1000')).json();
      expect(res.data.length).toBeGreaterThan(0);
      for (const g of res.data) {
        expect(['soccer', 'basketball']).toContain(g.sport);
        expect(g.id).toBe(`${g.sport}_${g.competition_id.split('_').pop()}`);
        expect(g.eligibility).toEqual({ live: true, archive: false, reports: true });
      }
      const old = (await get('/v1/games?league=wc&season=2014&limit=1')).json().data[0];
      expect(old.eligibility).toEqual({ live: false, archive: true, reports: false });
      expect(old.status).toBe('final');
    });
    it('validates and scopes', async () => {
      expectError(await get('/v1/games?sport=tennis'), 400, 'invalid_request', { param: 'sport' });
      expectError(await get('/v1/games?date=2026-1-1'), 400, 'invalid_request', { param: 'date' });
      expectError(await get('/v1/games', null), 401, 'authentication_error');
      expectError(await get('/v1/games?sport=soccer', tennisOnly), 403, 'permission_error');
      expect((await get('/v1/games', tennisOnly)).json().data).toEqual([]);
    });
  });

  describe('GET /v1/games/:id and /events', () => {
    it('serves a game by its game id and its confirmed events', async () => {
      const final = (await get('/v1/competitions?date=2022-12-18&league=wc')).json().data[0];
      const gameId = `soccer_${final.id.split('_').pop()}`;
      const game = await get(`/v1/games/${gameId}`);
      expect(game.statusCode).toBe(200);
      expect(game.json().data).toMatchObject({ id: gameId, competition_id: final.id });
      const events = (await get(`/v1/games/${gameId}/events`)).json().data;
      expect(events).toHaveLength(6);
      for (const e of events) {
        expect(e).toMatchObject({ type: 'score', tier: 'confirmed', game_id: gameId, sport: 'soccer', schema: 'svc.event.v1', points: 1 });
        expect(e.id).toMatch(/^evt_\d+$/);
        expect(e.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(['ARG', 'FRA']).toContain(e.team);
      }
      expectError(await get(`/v1/games/${gameId}/events`, liveOnly), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await get(`/v1/games/${gameId}/events`, reportOnly), 403, 'permission_error');
      expectError(await get(`/v1/games/${gameId}`, tennisOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
    });
    it('404s unknown or non-team-sport game ids, and their events, as resource_not_found', async () => {
      for (const id of ['soccer_99999999', 'basketball_99999999', 'tennis_1', 'soccer_wc_1', 'nope']) {
        expectError(await get(`/v1/games/${id}`), 404, 'not_found', { code: 'resource_not_found', param: 'id' });
        // Twice: the events list is cached, and a cached miss must stay a 404.
        for (let i = 0; i < 2; i++) expectError(await get(`/v1/games/${id}/events`), 404, 'not_found', { code: 'resource_not_found', param: 'id' });
        expectError(await get(`/v1/games/${id}/events?limit=1`, archiveOnly), 404, 'not_found', { code: 'resource_not_found' });
      }
    });
    it('serves today’s games’ events to the live product only', async () => {
      const g = (await get('/v1/games?date=today&limit=1')).json().data[0];
      expect((await get(`/v1/games/${g.id}/events`, liveOnly)).statusCode).toBe(200);
      expectError(await get(`/v1/games/${g.id}/events`, archiveOnly), 403, 'permission_error', { code: 'product_not_in_plan' });
    });
  });
});
