import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, engines, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';

describe.each(engines())('reference data on %s', (engine) => {
  let t: TestApp;
  let key: string;
  let basketballOnly: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key();
    basketballOnly = await t.key({ sports: ['basketball'], products: ['live'] });
  });
  afterAll(async () => t.close());
  const get = (url: string, k: string | null = key) => t.app.inject({ method: 'GET', url, headers: k ? auth(k) : {} });

  describe('GET /v1/teams', () => {
    it('lists teams of a league with the documented envelope', async () => {
      const res = await get('/v1/teams?league=wc&limit=5');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data).toHaveLength(5);
      expect(typeof body.next_cursor).toBe('string');
      for (const team of body.data) {
        expect(team.id).toMatch(/^team:wc:[A-Z0-9]+$/);
        expect(team).toMatchObject({ sport: 'soccer', league: 'wc' });
        expect(team.id).toBe(`team:wc:${team.code}`);
        expect(typeof team.external_ids).toBe('object');
      }
    });
    it('filters by sport', async () => {
      const body = (await get('/v1/teams?sport=basketball&limit=1000')).json();
      expect(body.data.length).toBe(8);
      expect(body.data.every((x: { sport: string; synthetic: boolean }) => x.sport === 'basketball' && x.synthetic)).toBe(true);
    });
    it('rejects bad filters with the parameter named', async () => {
      expectError(await get('/v1/teams?sport=curling'), 400, 'invalid_request', { param: 'sport' });
      expectError(await get('/v1/teams?league=nope'), 400, 'invalid_request', { param: 'league' });
      expectError(await get('/v1/teams?limit=0'), 400, 'invalid_request', { param: 'limit' });
      expectError(await get('/v1/teams?limit=1001'), 400, 'invalid_request', { param: 'limit' });
      expectError(await get('/v1/teams?cursor=garbage'), 400, 'invalid_request', { code: 'invalid_cursor', param: 'cursor' });
      expectError(await get('/v1/teams?leauge=wc'), 400, 'invalid_request', { code: 'unknown_parameter', param: 'leauge' });
      expectError(await get('/v1/teams?sport=basketball&league=wc'), 400, 'invalid_request', { param: 'league' });
    });
    it('needs a valid key and keeps to the key’s sports', async () => {
      expectError(await get('/v1/teams', null), 401, 'authentication_error', { code: 'missing_api_key' });
      expectError(await get('/v1/teams', 'svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 401, 'authentication_error');
      expectError(await get('/v1/teams?sport=soccer', basketballOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      expectError(await get('/v1/teams?league=wc', basketballOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      const scoped = (await get('/v1/teams?limit=1000', basketballOnly)).json();
      expect(scoped.data.length).toBe(8);
    });
  });

  describe('GET /v1/teams/:id', () => {
    it('returns one team in {data}', async () => {
      const res = await get('/v1/teams/team:wc:BRA');
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ id: 'team:wc:BRA', code: 'BRA', name: 'Brazil', external_ids: { fifa: 'BRA' } });
    });
    it('404s an unknown team', async () => {
      expectError(await get('/v1/teams/team:wc:XXX'), 404, 'not_found', { param: 'id' });
    });
    it('403s a team outside the key’s sports and 401s without a key', async () => {
      expectError(await get('/v1/teams/team:wc:BRA', basketballOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      expectError(await get('/v1/teams/team:wc:BRA', null), 401, 'authentication_error');
    });
  });

  describe('GET /v1/teams/:id/roster', () => {
    it('returns a season-scoped roster from the real 2026 squads', async () => {
      const res = await get('/v1/teams/team:wc:BRA/roster?season=wc_2026');
      expect(res.statusCode).toBe(200);
      const { data } = res.json();
      expect(data.length).toBeGreaterThanOrEqual(23);
      for (const r of data) {
        expect(r).toMatchObject({ team_id: 'team:wc:BRA', season: 'wc_2026' });
        expect(r.player_id).toMatch(/^player:wc:/);
      }
      const byLabel = (await get('/v1/teams/team:wc:BRA/roster?season=2026')).json();
      expect(byLabel.data.map((r: { player_id: string }) => r.player_id)).toEqual(data.map((r: { player_id: string }) => r.player_id));
    });
    it('validates season and scope', async () => {
      expectError(await get('/v1/teams/team:wc:BRA/roster?season=a%20b'), 400, 'invalid_request', { param: 'season' });
      expectError(await get('/v1/teams/team:wc:NOPE/roster'), 404, 'not_found');
      expectError(await get('/v1/teams/team:wc:BRA/roster', basketballOnly), 403, 'permission_error');
    });
  });

  describe('GET /v1/players', () => {
    it('searches accent-insensitively and filters by team and season', async () => {
      const res = await get('/v1/players?search=mbappe');
      expect(res.statusCode).toBe(200);
      expect(res.json().data.some((p: { name: string }) => p.name.includes('Mbappé'))).toBe(true);
      const squad = (await get('/v1/players?team=team:wc:BRA&season=wc_2026&limit=1000')).json();
      expect(squad.data.length).toBeGreaterThanOrEqual(23);
    });
    it('validates filters', async () => {
      expectError(await get('/v1/players?team=BRA'), 400, 'invalid_request', { param: 'team' });
      expectError(await get('/v1/players?search='), 400, 'invalid_request', { param: 'search' });
    });
    it('keeps to scope', async () => {
      expectError(await get('/v1/players?sport=soccer', basketballOnly), 403, 'permission_error');
      const list = (await get('/v1/players?limit=1000', basketballOnly)).json();
      expect(list.data.every((p: { sport: string }) => p.sport === 'basketball')).toBe(true);
    });
  });

  describe('GET /v1/players/:id', () => {
    it('returns one player, 404s an unknown one, 403s out of scope', async () => {
      const first = (await get('/v1/players?league=wc&limit=1')).json().data[0];
      const res = await get(`/v1/players/${first.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(first);
      expectError(await get('/v1/players/player:wc:nobody-at-all'), 404, 'not_found');
      expectError(await get(`/v1/players/${first.id}`, basketballOnly), 403, 'permission_error');
      expectError(await get(`/v1/players/${first.id}`, null), 401, 'authentication_error');
    });
  });

  describe('GET /v1/venues', () => {
    it('lists venues with geo parsed from the source coordinates', async () => {
      const { data } = (await get('/v1/venues?league=wc&limit=1000')).json();
      expect(data.length).toBeGreaterThanOrEqual(12 + 12 + 8);
      const maracana = data.find((v: { name: string }) => v.name.includes('Maracanã'));
      expect(maracana.geo.lat).toBeCloseTo(-22.912, 2);
      expect(maracana.geo.lng).toBeCloseTo(-43.230, 2);
    });
    it('validates and scopes', async () => {
      expectError(await get('/v1/venues?sport=chess'), 400, 'invalid_request', { param: 'sport' });
      expectError(await get('/v1/venues?sport=soccer', basketballOnly), 403, 'permission_error');
      expectError(await get('/v1/venues', null), 401, 'authentication_error');
    });
  });

  describe('GET /v1/venues/:id', () => {
    it('returns one venue and 404s unknown ones', async () => {
      const first = (await get('/v1/venues?league=wc&limit=1')).json().data[0];
      expect((await get(`/v1/venues/${first.id}`)).json().data).toEqual(first);
      expectError(await get('/v1/venues/no-such-stadium'), 404, 'not_found');
      expectError(await get(`/v1/venues/${first.id}`, basketballOnly), 403, 'permission_error');
    });
  });

  describe('GET /v1/seasons', () => {
    it('shows how far the archive goes back, with counts', async () => {
      const { data } = (await get('/v1/seasons?league=wc')).json();
      expect(data.map((s: { id: string }) => s.id)).toEqual(['wc_2014', 'wc_2018', 'wc_2022', 'wc_2026']);
      const wc2022 = data.find((s: { id: string }) => s.id === 'wc_2022');
      expect(wc2022).toMatchObject({ league: 'wc', label: '2022', competitions: 64, synthetic: false });
      expect(wc2022.events).toBeGreaterThan(150);
      const intl = (await get('/v1/seasons?league=intl&limit=1')).json();
      expect(intl.data[0].id).toBe('intl_2000');
    });
    it('validates and scopes', async () => {
      expectError(await get('/v1/seasons?league=W C'), 400, 'invalid_request', { param: 'league' });
      expectError(await get('/v1/seasons?league=wc', basketballOnly), 403, 'permission_error');
      expectError(await get('/v1/seasons', null), 401, 'authentication_error');
    });
  });

  describe('GET /v1/me', () => {
    it('describes the key', async () => {
      const res = await get('/v1/me', basketballOnly);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({
        environment: 'sandbox',
        plan: 'internal',
        products: ['live'],
        sports: ['basketball'],
        leagues: null,
        rate_limit: { window_s: 60 },
      });
      expect(res.json().data.stream_connections.limit).toBeGreaterThan(0);
      expectError(await get('/v1/me', null), 401, 'authentication_error');
      expectError(await get('/v1/me?x=1'), 400, 'invalid_request', { param: 'x' });
    });
  });
});
