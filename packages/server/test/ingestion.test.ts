import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, engines, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';

interface Game {
  id: string;
  competition_id: string;
  sport: string;
  status: string;
  competitors: { entity_id: string; role: string }[];
}

describe.each(engines())('ingestion on %s', (engine) => {
  let t: TestApp;
  let admin: string;
  let reporter: string;
  let source: string;
  let soccer: Game;
  let basketball: Game;
  let tennis: Game;
  beforeAll(async () => {
    t = await testApp({ engine });
    admin = await t.key();
    reporter = await t.key({ products: ['report'] });
    source = await t.key({ products: ['source'] });
    const games = (await t.app.inject({ url: '/v1/competitions?date=today&limit=1000', headers: auth(admin) })).json().data as Game[];
    const game = (c: Game) => ({ ...c, id: `${c.sport}_${c.id.split('_').pop()}`, competition_id: c.id });
    soccer = game(games.filter((g) => g.sport === 'soccer')[0]);
    basketball = game(games.filter((g) => g.sport === 'basketball')[0]);
    tennis = game(games.filter((g) => g.sport === 'tennis')[0]);
  });
  afterAll(async () => t.close());

  const code = (g: Game, role = 'home') => String(g.competitors.find((c) => c.role === role)?.entity_id.split(':').pop());
  const post = (url: string, body: unknown, key: string | null = reporter) =>
    t.app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { ...(key ? auth(key) : {}), 'content-type': 'application/json' } });
  const count = async (table: 'reports' | 'events' | 'plays') =>
    Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  describe('POST /v1/reports', () => {
    it('accepts a report and a batch, answering 202 with report and event ids', async () => {
      const one = await post('/v1/reports', { game_id: basketball.id, team: code(basketball), points: 2 });
      expect(one.statusCode).toBe(202);
      expect(one.json().data[0]).toMatchObject({ tier: 'provisional' });
      expect(one.json().data[0].event_id).toMatch(/^evt_/);
      const batch = await post('/v1/reports', { reports: [{ game_id: basketball.id, team: code(basketball, 'away'), points: 3 }, { game_id: soccer.id, team: code(soccer), points: 1 }] });
      expect(batch.statusCode).toBe(202);
      expect(batch.json().data).toHaveLength(2);
      const status = (await t.app.inject({ url: `/v1/games/${basketball.id}`, headers: auth(admin) })).json().data.status;
      expect(status).toBe('live');
    });

    it('makes a report idempotent per key with ref', async () => {
      const body = { game_id: basketball.id, team: code(basketball), points: 1, ref: 'abc-1' };
      const a = (await post('/v1/reports', body)).json().data[0];
      const events = await count('events');
      const b = (await post('/v1/reports', body)).json().data[0];
      expect(b).toEqual(a);
      expect(await count('events')).toBe(events);
    });

    it('rejects bad input clearly and stores nothing', async () => {
      const before = [await count('reports'), await count('events')];
      expectError(await post('/v1/reports', { game_id: 'soccer_99999999', team: 'X', points: 1 }), 400, 'invalid_request', { code: 'unknown_game', param: 'game_id' });
      expectError(await post('/v1/reports', { game_id: soccer.id, team: 'ZZZ', points: 1 }), 400, 'invalid_request', { code: 'team_not_in_game', param: 'team' });
      expectError(await post('/v1/reports', { game_id: soccer.id, team: code(soccer), points: 3 }), 400, 'invalid_request', { code: 'invalid_points', param: 'points' });
      expectError(await post('/v1/reports', { game_id: basketball.id, team: code(basketball), points: 4 }), 400, 'invalid_request', { code: 'invalid_points' });
      expectError(await post('/v1/reports', { game_id: soccer.id, team: code(soccer) }), 400, 'invalid_request', { param: 'points' });
      expectError(await post('/v1/reports', { game_id: soccer.id, team: code(soccer), points: 1, extra: true }), 400, 'invalid_request');
      const res = await t.app.inject({ method: 'POST', url: '/v1/reports', payload: '{"game_id":', headers: { ...auth(reporter), 'content-type': 'application/json' } });
      expectError(res, 400, 'invalid_request', { code: 'invalid_json' });
      const text = await t.app.inject({ method: 'POST', url: '/v1/reports', payload: 'hello', headers: { ...auth(reporter), 'content-type': 'text/plain' } });
      expectError(text, 415, 'unsupported_media_type');
      const tooMany = Array.from({ length: 501 }, () => ({ game_id: soccer.id, team: code(soccer), points: 1 }));
      expectError(await post('/v1/reports', { reports: tooMany }), 400, 'invalid_request', { param: 'reports' });
      // One bad report rejects the whole batch: nothing of it is stored.
      const mixed = [{ game_id: soccer.id, team: code(soccer), points: 1 }, { game_id: soccer.id, team: 'NOPE', points: 1 }];
      expectError(await post('/v1/reports', { reports: mixed }), 400, 'invalid_request', { param: 'reports[1].team' });
      expectError(await post('/v1/reports', { game_id: tennis.id, team: 'X', points: 1 }), 400, 'invalid_request', { code: 'team_not_in_game' });
      const big = await t.app.inject({ method: 'POST', url: '/v1/reports', payload: JSON.stringify({ reports: [{ game_id: 'x'.repeat(2_000_000), team: 'a', points: 1 }] }), headers: { ...auth(reporter), 'content-type': 'application/json' } });
      expectError(big, 413, 'payload_too_large');
      expect([await count('reports'), await count('events')]).toEqual(before);
    });

    it('refuses an observed_at outside the last 6 hours or more than 5 minutes ahead, storing and publishing nothing', async () => {
      const before = [await count('reports'), await count('events')];
      const now = t.clock.now();
      for (const observed_at of ['2099-01-01T00:00:00Z', '2000-01-01T00:00:00Z', new Date(now - 6 * 3_600_000 - 60_000).toISOString(), new Date(now + 6 * 60_000).toISOString()]) {
        expectError(await post('/v1/reports', { game_id: soccer.id, team: code(soccer), points: 1, observed_at }), 400, 'invalid_request', { code: 'invalid_field', param: 'observed_at' });
        expectError(await post('/v1/reports', { reports: [{ game_id: soccer.id, team: code(soccer), points: 1 }, { game_id: soccer.id, team: code(soccer), points: 1, observed_at }] }), 400, 'invalid_request', { param: 'reports[1].observed_at' });
      }
      expect([await count('reports'), await count('events')]).toEqual(before);
      // Inside the window: a little ahead counts as the arrival, an hour ago as it says.
      for (const observed_at of [new Date(now + 4 * 60_000).toISOString(), new Date(now - 3_600_000).toISOString()]) {
        expect((await post('/v1/reports', { game_id: basketball.id, team: code(basketball), points: 1, observed_at })).statusCode).toBe(202);
      }
    });

    it('refuses a final game with 409 and a past game', async () => {
      const past = (await t.app.inject({ url: '/v1/games?league=wc&season=2022&limit=1', headers: auth(admin) })).json().data[0];
      expectError(await post('/v1/reports', { game_id: past.id, team: past.competitors[0].entity_id.split(':').pop(), points: 1 }), 409, 'conflict', { code: 'game_final' });
    });

    it('needs the report product, a valid key and the game’s sport in scope', async () => {
      const body = { game_id: soccer.id, team: code(soccer), points: 1 };
      expectError(await post('/v1/reports', body, null), 401, 'authentication_error');
      expectError(await post('/v1/reports', body, await t.key({ products: ['live'] })), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await post('/v1/reports', body, await t.key({ products: ['report'], sports: ['basketball'] })), 403, 'permission_error', { code: 'sport_not_in_scope' });
    });
  });

  describe('POST /v1/competitions/:id/plays', () => {
    it('appends official plays, keeps a running state and moves the status to live then final', async () => {
      const home = soccer.competitors.find((c) => c.role === 'home')?.entity_id ?? '';
      const away = soccer.competitors.find((c) => c.role === 'away')?.entity_id ?? '';
      const period = { unit: 'half', num: 1, label: '1st half' };
      const res = await post(`/v1/competitions/${soccer.competition_id}/plays`, { plays: [
        { period, competitor_id: home, event_type: 'kickoff', points: 0, clock: "0'" },
        { period, competitor_id: away, event_type: 'goal', points: 1, clock: "12'" },
      ] }, source);
      expect(res.statusCode, res.body).toBe(201);
      const plays = res.json().data;
      expect(plays[1]).toMatchObject({ competition_id: soccer.competition_id, event_type: 'goal', state: { home: 0, away: 1 }, schema: 'svc.play.v1', source: 'official' });
      expect(plays[1].seq).toBe(plays[0].seq + 1);
      const comp = (await t.app.inject({ url: `/v1/competitions/${soccer.competition_id}`, headers: auth(admin) })).json().data;
      expect(comp.status).toBe('live');
      expect(comp.competitors.find((c: { role: string }) => c.role === 'away').score).toBe(1);
      // The official goal is a confirmed event at once.
      const events = (await t.app.inject({ url: `/v1/games/${soccer.id}/events`, headers: auth(admin) })).json().data;
      expect(events.some((e: { team: string; confidence: { agreement: number } }) => e.team === code(soccer, 'away') && e.confidence.agreement === 1)).toBe(true);
      const fin = await post(`/v1/competitions/${soccer.competition_id}/plays`, { period: { unit: 'fulltime', num: 1, label: 'Full time' }, competitor_id: home, event_type: 'final', points: 0 }, source);
      expect(fin.statusCode).toBe(201);
      expect((await t.app.inject({ url: `/v1/competitions/${soccer.competition_id}`, headers: auth(admin) })).json().data.status).toBe('final');
      expectError(await post('/v1/reports', { game_id: soccer.id, team: code(soccer), points: 1 }), 409, 'conflict', { code: 'game_final' });
      expectError(await post(`/v1/competitions/${soccer.competition_id}/plays`, { period, competitor_id: home, event_type: 'goal', points: 1 }, source), 409, 'conflict', { code: 'competition_final' });
    });

    it('lets no play follow the final play when plays race it (final is terminal in the store)', async () => {
      const games = (await t.app.inject({ url: '/v1/competitions?date=today&sport=tennis&limit=1000', headers: auth(admin) })).json().data as Game[];
      const match = games.filter((g) => g.status === 'scheduled')[1];
      const player = match.competitors[0].entity_id;
      const url = `/v1/competitions/${match.id}/plays`;
      const period = { unit: 'set', num: 1, label: 'Set 1' };
      // All of them pass the handler's status check before the first transaction runs.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => post(url, { period, competitor_id: player, event_type: i === 2 ? 'final' : 'point', points: i === 2 ? 0 : 1 }, source)),
      );
      const plays = await t.db.kysely.selectFrom('plays').select(['seq', 'event_type']).where('competition_id', '=', match.id).orderBy('seq').execute();
      expect(plays.filter((p) => p.event_type === 'final')).toHaveLength(1);
      expect(plays[plays.length - 1].event_type).toBe('final');
      const refused = answers.filter((a) => a.statusCode !== 201);
      for (const a of refused) expectError(a, 409, 'conflict', { code: 'competition_final' });
      expect(plays).toHaveLength(answers.length - refused.length);
    });

    it('rejects bad plays and stores nothing', async () => {
      const home = basketball.competitors[0].entity_id;
      const before = await count('plays');
      const period = { unit: 'quarter', num: 1, label: 'Q1' };
      const url = `/v1/competitions/${basketball.competition_id}/plays`;
      expectError(await post(url, { period, competitor_id: 'team:sbl:NOPE', event_type: 'two_pointer', points: 2 }, source), 400, 'invalid_request', { code: 'competitor_not_in_competition' });
      expectError(await post(url, { period, competitor_id: home, event_type: 'five', points: 5 }, source), 400, 'invalid_request', { code: 'invalid_points' });
      expectError(await post(url, { plays: [{ period, competitor_id: home, event_type: 'two_pointer', points: 2 }, { period, competitor_id: home, event_type: 'x', points: -1 }] }, source), 400, 'invalid_request', { param: 'plays[1].points' });
      expectError(await post(url, { competitor_id: home, event_type: 'x', points: 1 }, source), 400, 'invalid_request', { param: 'period' });
      expectError(await post('/v1/competitions/basketball_sbl_99999/plays', { period, competitor_id: home, event_type: 'x', points: 1 }, source), 404, 'not_found');
      expect(await count('plays')).toBe(before);
    });

    it('needs the source product and scope', async () => {
      const body = { period: { unit: 'quarter', num: 1, label: 'Q1' }, competitor_id: basketball.competitors[0].entity_id, event_type: 'two_pointer', points: 2 };
      const url = `/v1/competitions/${basketball.competition_id}/plays`;
      expectError(await post(url, body, null), 401, 'authentication_error');
      expectError(await post(url, body, reporter), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await post(url, body, await t.key({ products: ['source'], sports: ['soccer'] })), 403, 'permission_error', { code: 'sport_not_in_scope' });
    });
  });
});
