import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, engines, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';

interface Row {
  rank: number;
  entity_id: string;
  played: number;
  won: number;
  drawn?: number;
  lost: number;
  scored: number;
  conceded: number;
  diff: number;
  points?: number;
  pct?: number;
  games_behind?: number;
  live: boolean;
}
interface Table {
  group: string | null;
  rows: Row[];
}

/**
 * The published group tables of the FIFA World Cup 2022 (FIFA's final standings): team code,
 * points, goals for, goals against, in finishing order. The archive's answers are checked against
 * these, not against anything the service computed.
 */
const WC_2022: Record<string, [string, number, number, number][]> = {
  'Group A': [['NED', 7, 5, 1], ['SEN', 6, 5, 4], ['ECU', 4, 4, 3], ['QAT', 0, 1, 7]],
  'Group B': [['ENG', 7, 9, 2], ['USA', 5, 2, 1], ['IRN', 3, 4, 7], ['WAL', 1, 1, 6]],
  'Group C': [['ARG', 6, 5, 2], ['POL', 4, 2, 2], ['MEX', 4, 2, 3], ['KSA', 3, 3, 5]],
  'Group D': [['FRA', 6, 6, 3], ['AUS', 6, 3, 4], ['TUN', 4, 1, 1], ['DEN', 1, 1, 3]],
  'Group E': [['JPN', 6, 4, 3], ['ESP', 4, 9, 3], ['GER', 4, 6, 5], ['CRC', 3, 3, 11]],
  'Group F': [['MAR', 7, 4, 1], ['CRO', 5, 4, 1], ['BEL', 4, 1, 2], ['CAN', 0, 2, 7]],
  'Group G': [['BRA', 6, 3, 1], ['SUI', 6, 4, 3], ['CMR', 4, 4, 4], ['SRB', 1, 5, 8]],
  'Group H': [['POR', 6, 6, 4], ['KOR', 4, 4, 4], ['URU', 4, 2, 2], ['GHA', 3, 5, 7]],
};

describe('standings, box scores and leaders against the FIFA World Cup 2022 (sqlite)', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = await t.key({ products: ['archive'] });
  });
  afterAll(async () => t.close());
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { ...auth(key), ...headers } });

  it('the eight group tables are the published ones (Group H: Korea above Uruguay on goals scored; Group C: Poland above Mexico on difference)', async () => {
    const res = await get('/v1/standings?league=wc&season=2022');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Date.parse(body.as_of)).not.toBeNaN();
    const tables: Table[] = body.data;
    expect(tables.map((x) => x.group)).toEqual(Object.keys(WC_2022));
    for (const table of tables) {
      const published = WC_2022[table.group ?? ''];
      expect(table.rows.map((r) => [r.entity_id.replace('team:wc:', ''), r.points, r.scored, r.conceded]), table.group ?? '').toEqual(published);
      for (const r of table.rows) {
        expect(r.played).toBe(3);
        expect(r.won + (r.drawn ?? 0) + r.lost).toBe(3);
        expect(r.diff).toBe(r.scored - r.conceded);
        expect(r.live).toBe(false);
      }
      expect(table.rows.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
    }
    // The same season by id; the knockout games count in no table.
    expect((await get('/v1/standings?league=wc&season=wc_2022')).json().data).toEqual(tables);
  });

  it('the final’s box score: 2-0 at half time, 2-2 after 90, 3-3 after extra time, 4-2 on penalties to Argentina', async () => {
    const competitions = (await get('/v1/competitions?league=wc&season=2022&date=2022-12-18')).json().data;
    const final = competitions[0];
    expect(final.group).toBeNull();
    const res = await get(`/v1/competitions/${final.id}/boxscore`);
    expect(res.statusCode).toBe(200);
    const b = res.json().data;
    expect(b).toMatchObject({ competition_id: final.id, sport: 'soccer', status: 'final', winner: 'team:wc:ARG' });
    const line = b.competitors.map((c: { entity_id: string; score: number; shootout?: number; periods: { unit: string; num: number; points: number }[] }) => [
      c.entity_id,
      c.periods.map((p) => `${p.unit}${p.num}:${p.points}`).join(' '),
      c.score,
      c.shootout,
    ]);
    expect(line).toEqual([
      ['team:wc:ARG', 'half1:2 half2:0 extra_time1:0 extra_time2:1', 3, 4],
      ['team:wc:FRA', 'half1:0 half2:2 extra_time1:0 extra_time2:1', 3, 2],
    ]);
    const mbappe = b.players.find((p: { player_id: string }) => p.player_id === 'player:wc:kylian-mbappe');
    expect(mbappe).toEqual({ player_id: 'player:wc:kylian-mbappe', competitor_id: 'team:wc:FRA', points: 3, by_type: { goal: 1, penalty_goal: 2 } });
    expect(b.players.find((p: { player_id: string }) => p.player_id === 'player:wc:lionel-messi')).toMatchObject({ points: 2, by_type: { goal: 1, penalty_goal: 1 } });
  });

  it('an own goal: listed for its scorer, credited to the other side (2022, Canada–Morocco: Aguerd’s own goal)', async () => {
    const games = (await get('/v1/competitions?league=wc&season=2022&team=team:wc:MAR&limit=20')).json().data;
    const game = games.find((c: { competitors: { entity_id: string }[] }) => c.competitors.some((x) => x.entity_id === 'team:wc:CAN'));
    const b = (await get(`/v1/competitions/${game.id}/boxscore`)).json().data;
    const can = b.competitors.find((c: { entity_id: string }) => c.entity_id === 'team:wc:CAN');
    const mar = b.competitors.find((c: { entity_id: string }) => c.entity_id === 'team:wc:MAR');
    expect([mar.score, can.score]).toEqual([2, 1]);
    const og = b.players.filter((p: { by_type: Record<string, number> }) => p.by_type.own_goal);
    expect(og).toHaveLength(1);
    expect(og[0]).toMatchObject({ competitor_id: 'team:wc:MAR', points: 0, by_type: { own_goal: 1 } });
    expect(b.winner).toBe('team:wc:MAR');
  });

  it('the Golden Boot: Mbappé 8, Messi 7, then Álvarez and Giroud sharing third with 4', async () => {
    const res = await get('/v1/leaders?league=wc&season=2022&limit=4');
    expect(res.statusCode).toBe(200);
    const { data, next_cursor } = res.json();
    expect(data).toEqual([
      { rank: 1, player_id: 'player:wc:kylian-mbappe', competitor_id: 'team:wc:FRA', value: 8 },
      { rank: 2, player_id: 'player:wc:lionel-messi', competitor_id: 'team:wc:ARG', value: 7 },
      { rank: 3, player_id: 'player:wc:julian-alvarez', competitor_id: 'team:wc:ARG', value: 4 },
      { rank: 3, player_id: 'player:wc:olivier-giroud', competitor_id: 'team:wc:FRA', value: 4 },
    ]);
    // The next page goes on after Giroud, ranks counted over the whole list.
    const next = (await get(`/v1/leaders?league=wc&season=2022&limit=4&cursor=${next_cursor}`)).json().data;
    expect(next[0].rank).toBe(5);
    expect(next.every((l: { value: number }) => l.value <= 4)).toBe(true);
    const stats = (await get('/v1/players/player:wc:kylian-mbappe/stats')).json().data;
    const s2022 = stats.find((s: { season: string }) => s.season === '2022');
    expect(s2022).toEqual({ league: 'wc', season: '2022', competitor_id: 'team:wc:FRA', points: 8, by_type: { goal: 6, penalty_goal: 2 } });
    // 2018: four goals, none from the spot. (2022: his two penalties were both in the final.)
    expect(stats.find((s: { season: string }) => s.season === '2018')).toMatchObject({ points: 4, by_type: { goal: 4 } });
    expect((await get('/v1/players/player:wc:kylian-mbappe/stats?season=2018')).json().data).toHaveLength(1);
  });

  it('ETag and If-None-Match on all four reads', async () => {
    for (const url of ['/v1/standings?league=wc&season=2022', '/v1/competitions/soccer_wc_21728/boxscore', '/v1/leaders?league=wc&season=2022', '/v1/players/player:wc:kylian-mbappe/stats']) {
      const first = await get(url);
      const etag = first.headers.etag;
      expect(typeof etag, url).toBe('string');
      const again = await get(url, { 'if-none-match': String(etag) });
      expect(again.statusCode, url).toBe(304);
      expect(again.body).toBe('');
      const other = await get(url, { 'if-none-match': 'W/"something-else"' });
      expect(other.statusCode, url).toBe(200);
    }
  });
});

describe('bad input and scopes', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = await t.key();
  });
  afterAll(async () => t.close());
  const get = async (url: string, k?: string) => t.app.inject({ method: 'GET', url, headers: auth(k ?? key) });

  it('a tennis league is 400 standings_unavailable (param league); an unknown league or season, a bad tier, an unknown parameter are 400', async () => {
    expectError(await get('/v1/standings?league=stt'), 400, 'invalid_request', { code: 'standings_unavailable', param: 'league' });
    expectError(await get('/v1/leaders?league=sgt'), 400, 'invalid_request', { code: 'standings_unavailable', param: 'league' });
    expectError(await get('/v1/standings?league=nope'), 400, 'invalid_request', { code: 'invalid_parameter', param: 'league' });
    expectError(await get('/v1/standings?league=wc&season=1930'), 400, 'invalid_request', { code: 'invalid_parameter', param: 'season' });
    expectError(await get('/v1/leaders?league=wc&season=1930'), 400, 'invalid_request', { code: 'invalid_parameter', param: 'season' });
    expectError(await get('/v1/standings?league=wc&season=2022&tier=rumour'), 400, 'invalid_request');
    expectError(await get('/v1/standings?league=wc&season=2022&live=maybe'), 400, 'invalid_request');
    expectError(await get('/v1/standings?league=wc&season=2022&sort=points'), 400, 'invalid_request', { code: 'unknown_parameter' });
    expectError(await get('/v1/standings'), 400, 'invalid_request');
    expectError(await get('/v1/leaders?league=wc&season=2022&cursor=bogus'), 400, 'invalid_request', { code: 'invalid_cursor' });
    expectError(await get('/v1/competitions/soccer_wc_999999/boxscore'), 404, 'not_found', { code: 'resource_not_found' });
    expectError(await get('/v1/players/player:wc:nobody-at-all/stats'), 404, 'not_found', { code: 'resource_not_found' });
  });

  it('a key without the sport is 403 sport_not_in_scope; a key with neither live nor archive is 403 product_not_in_plan; a wrong key is 401', async () => {
    const basketballOnly = await t.key({ sports: ['basketball'] });
    const reportOnly = await t.key({ products: ['report'] });
    const liveOnly = await t.key({ products: ['live'] });
    for (const url of ['/v1/standings?league=wc&season=2022', '/v1/leaders?league=wc&season=2022', '/v1/competitions/soccer_wc_21728/boxscore', '/v1/players/player:wc:kylian-mbappe/stats']) {
      expectError(await get(url, basketballOnly), 403, 'permission_error', { code: 'sport_not_in_scope' });
      expectError(await get(url, reportOnly), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await get(url, 'svc_test_0000000000000000000000000000000000'), 401, 'authentication_error');
      expectError(await t.app.inject({ method: 'GET', url }), 401, 'authentication_error');
    }
    // Standings take either product; a past game's box score needs archive, as its plays do.
    expect((await get('/v1/standings?league=wc&season=2022', liveOnly)).statusCode).toBe(200);
    expectError(await get('/v1/competitions/soccer_wc_21728/boxscore', liveOnly), 403, 'permission_error', { code: 'product_not_in_plan' });
    expect((await get('/v1/standings?league=sbl', basketballOnly)).statusCode).toBe(200);
  });

  it('basketball: one table, pct and games behind, rows ordered by pct', async () => {
    const res = await get('/v1/standings?league=sbl');
    expect(res.statusCode).toBe(200);
    const [table] = res.json().data as Table[];
    expect(table.group).toBeNull();
    const rows = table.rows;
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) {
      expect(r.pct).toBe(r.played === 0 ? 0 : Math.round((r.won / r.played) * 1000) / 1000);
      expect(r.drawn).toBeUndefined();
      expect(r.games_behind).toBe((rows[0].won - r.won + (r.lost - rows[0].lost)) / 2);
    }
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].pct ?? 0).toBeGreaterThanOrEqual(rows[i].pct ?? 0);
  });
});

describe.each(engines())('live: official plays move the box score, the standings’ live rows and the leaders (%s)', (engine) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key();
  });
  afterAll(async () => t.close());
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: auth(key) });
  const post = (url: string, body: unknown) => t.app.inject({ method: 'POST', url, headers: auth(key), payload: body as Record<string, unknown> });

  it('a simulated game in progress counts at its current score, marked live; live=false leaves it out', async () => {
    const season = (await get('/v1/seasons?league=intl&limit=1000')).json().data.at(-1);
    const scheduled = (await get(`/v1/competitions?league=intl&season=${season.id}&status=scheduled&limit=1`)).json().data;
    expect(scheduled.length).toBe(1);
    const game = scheduled[0];
    const [home, away] = game.competitors.map((c: { entity_id: string }) => c.entity_id);
    const scorer = `player:intl:${home.split(':')[2].toLowerCase()}-striker`;
    const defender = `player:intl:${away.split(':')[2].toLowerCase()}-defender`;
    const before = (await get(`/v1/standings?league=intl&season=${season.id}`)).json().data[0].rows as Row[];
    const homeBefore = before.find((r) => r.entity_id === home);
    expect(homeBefore?.live).toBe(false);
    const first = (await get(`/v1/competitions/${game.id}/boxscore`)).json().data;
    expect(first.competitors.map((c: { score: number }) => c.score)).toEqual([0, 0]);
    const etag0 = (await get(`/v1/competitions/${game.id}/boxscore`)).headers.etag;

    const half1 = { unit: 'half', num: 1, label: '1st half' };
    expect((await post(`/v1/competitions/${game.id}/plays`, { period: half1, competitor_id: home, event_type: 'kickoff', points: 0 })).statusCode).toBe(201);
    expect((await post(`/v1/competitions/${game.id}/plays`, { period: half1, competitor_id: home, player_id: scorer, event_type: 'goal', points: 1, clock: "12'" })).statusCode).toBe(201);
    // The away side's defender puts it in his own net: a goal for home.
    expect((await post(`/v1/competitions/${game.id}/plays`, { period: { unit: 'half', num: 2, label: '2nd half' }, competitor_id: home, player_id: defender, event_type: 'own_goal', points: 1, clock: "60'" })).statusCode).toBe(201);

    const box = await get(`/v1/competitions/${game.id}/boxscore`);
    expect(box.headers.etag).not.toBe(etag0);
    const b = box.json().data;
    expect(b.status).toBe('live');
    expect(b.winner).toBeNull();
    expect(b.competitors.map((c: { score: number; periods: { points: number }[] }) => [c.score, c.periods.map((p) => p.points)])).toEqual([
      [2, [1, 1]],
      [0, [0, 0]],
    ]);
    expect(b.players.find((p: { player_id: string }) => p.player_id === scorer)).toMatchObject({ competitor_id: home, points: 1, by_type: { goal: 1 } });
    expect(b.players.find((p: { player_id: string }) => p.player_id === defender)).toMatchObject({ competitor_id: away, points: 0, by_type: { own_goal: 1 } });

    // Standings: both sides' rows are live, at the current (confirmed) score: official plays confirm at once.
    const rows = (await get(`/v1/standings?league=intl&season=${season.id}`)).json().data[0].rows as Row[];
    const h = rows.find((r) => r.entity_id === home);
    const a = rows.find((r) => r.entity_id === away);
    expect(h).toMatchObject({ live: true, played: (homeBefore?.played ?? 0) + 1, won: (homeBefore?.won ?? 0) + 1, scored: (homeBefore?.scored ?? 0) + 2 });
    expect(a?.live).toBe(true);
    const provisional = (await get(`/v1/standings?league=intl&season=${season.id}&tier=provisional`)).json().data[0].rows as Row[];
    expect(provisional.find((r) => r.entity_id === home)).toMatchObject({ live: true, scored: h?.scored });
    // A crowd report of an away goal: a provisional event, counted by tier=provisional only.
    const reporter = await t.key({ products: ['report'] });
    const report = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: auth(reporter), payload: { game_id: game.id.replace(/_intl_/, '_'), team: away.split(':')[2], points: 1, event_type: 'goal' } });
    expect(report.statusCode, report.body).toBe(202);
    expect(report.json().data[0].tier).toBe('provisional');
    const crowd = (await get(`/v1/standings?league=intl&season=${season.id}&tier=provisional`)).json().data[0].rows as Row[];
    expect(crowd.find((r) => r.entity_id === away)).toMatchObject({ live: true, scored: (a?.scored ?? 0) + 1 });
    expect(((await get(`/v1/standings?league=intl&season=${season.id}`)).json().data[0].rows as Row[]).find((r) => r.entity_id === away)?.scored).toBe(a?.scored);
    const finished = (await get(`/v1/standings?league=intl&season=${season.id}&live=false`)).json().data[0].rows as Row[];
    expect(finished.find((r) => r.entity_id === home)).toEqual({ ...homeBefore, rank: finished.find((r) => r.entity_id === home)?.rank });

    // Leaders: the scorer has a goal; the own goal counts for no one's goals.
    const leaders = (await get(`/v1/leaders?league=intl&season=${season.id}&limit=1000`)).json().data;
    expect(leaders.find((l: { player_id: string }) => l.player_id === scorer)).toMatchObject({ competitor_id: home, value: 1 });
    expect(leaders.some((l: { player_id: string }) => l.player_id === defender)).toBe(false);
    const ownGoals = (await get(`/v1/leaders?league=intl&season=${season.id}&stat=own_goal&limit=1000`)).json().data;
    expect(ownGoals.find((l: { player_id: string }) => l.player_id === defender)).toMatchObject({ competitor_id: away, value: 1 });

    // The final whistle: the game is final, the winner named, the rows no longer live.
    expect((await post(`/v1/competitions/${game.id}/plays`, { period: { unit: 'fulltime', num: 1, label: 'Full time' }, competitor_id: home, event_type: 'final', points: 0 })).statusCode).toBe(201);
    expect((await get(`/v1/competitions/${game.id}/boxscore`)).json().data).toMatchObject({ status: 'final', winner: home });
    const after = (await get(`/v1/standings?league=intl&season=${season.id}&live=false`)).json().data[0].rows as Row[];
    expect(after.find((r) => r.entity_id === home)).toMatchObject({ live: false, won: (homeBefore?.won ?? 0) + 1 });
  });
});
