import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './contract.js';
import { auth, engines, testApp, type TestApp } from './helpers.js';

type Json = Record<string, unknown>;

describe.each(engines())('hostile input on ingestion and webhooks (%s)', (engine) => {
  let t: TestApp;
  let key: string;
  let game: { id: string; competition_id: string };
  let team: string;
  let competitor: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key();
    game = (await t.app.inject({ url: '/v1/games?sport=soccer&status=scheduled&limit=1', headers: auth(key) })).json().data[0];
    const full = (await t.app.inject({ url: `/v1/games/${game.id}`, headers: auth(key) })).json().data;
    competitor = full.competitors[0].entity_id;
    team = competitor.split(':')[2];
  });
  afterAll(async () => t.close());

  const post = (url: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url, headers: { ...auth(key), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
  const countReports = async () => Number((await t.db.kysely.selectFrom('reports').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const play = (extra: Json = {}) => ({ period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: competitor, event_type: 'goal', points: 1, ...extra });

  it('takes JSON types as sent: no string for a number, no array for a scalar, no scalar for a list', async () => {
    const before = await countReports();
    const bad: [Json, string][] = [
      [{ game_id: game.id, team, points: '1' }, 'points'],
      [{ game_id: game.id, team, points: [1] }, 'points'],
      [{ game_id: [game.id], team, points: 1 }, 'game_id'],
      [{ game_id: game.id, team, points: true }, 'points'],
      [{ game_id: game.id, team: 7, points: 1 }, 'team'],
    ];
    for (const [body, param] of bad) expectError(await post('/v1/reports', body), 400, 'invalid_request', { param });
    expectError(await post(`/v1/competitions/${game.competition_id}/plays`, play({ points: '1' })), 400, 'invalid_request', { param: 'points' });
    expectError(await post('/v1/webhooks', { url: 'https://93.184.215.14/h', tier: 'confirmed', sports: 'soccer' }), 400, 'invalid_request', { param: 'sports' });
    expect(await countReports()).toBe(before);
  });

  it('refuses NUL characters and unpaired surrogates anywhere in a request with a 400 naming the field', async () => {
    const before = await countReports();
    expectError(await post('/v1/reports', { game_id: game.id, team, points: 1, ref: 'a\u0000b' }), 400, 'invalid_request', { code: 'invalid_characters', param: 'ref' });
    expectError(await post('/v1/reports', { reports: [{ game_id: game.id, team, points: 1, ref: 'x\ud800' }] }), 400, 'invalid_request', { code: 'invalid_characters', param: 'reports[0].ref' });
    expectError(await post(`/v1/competitions/${game.competition_id}/plays`, play({ source: 'feed\u0000' })), 400, 'invalid_request', { code: 'invalid_characters', param: 'source' });
    expectError(await post('/v1/webhooks', { url: 'https://93.184.215.14/h', tier: 'confirmed', description: 'a\u0000' }), 400, 'invalid_request', { code: 'invalid_characters', param: 'description' });
    for (const url of ['/v1/teams/team:wc:%00', '/v1/webhooks/we_%00', `/v1/competitions/${game.competition_id}%00/plays`, '/v1/games/soccer_1%00/events']) {
      expectError(await t.app.inject({ url, headers: auth(key) }), 400, 'invalid_request', { code: 'invalid_characters', param: 'id' });
    }
    expectError(await post('/v1/competitions/%00/plays', play()), 400, 'invalid_request', { code: 'invalid_characters', param: 'id' });
    expectError(await t.app.inject({ url: '/v1/teams?league=%00', headers: auth(key) }), 400, 'invalid_request', { param: 'league' });
    expect(await countReports()).toBe(before);
    // Other unicode is data: stored and returned as sent.
    const res = await post('/v1/webhooks', { url: 'https://93.184.215.14/h', tier: 'confirmed', description: 'Café ⚽ 東京 \u202e' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.description).toBe('Café ⚽ 東京 \u202e');
  });

  it('refuses impossible calendar dates in observed_at and ts', async () => {
    const before = await countReports();
    for (const observed_at of ['2022-02-30T00:00:00Z', '2023-02-29T12:00:00Z', '2022-04-31T00:00:00Z', '2022-01-01T24:00:00Z']) {
      expectError(await post('/v1/reports', { game_id: game.id, team, points: 1, observed_at }), 400, 'invalid_request', { param: 'observed_at' });
    }
    expectError(await post(`/v1/competitions/${game.competition_id}/plays`, play({ ts: '2022-02-30T00:00:00Z' })), 400, 'invalid_request', { param: 'ts' });
    expect(await countReports()).toBe(before);
  });

  it('refuses a webhook URL with control characters or whitespace rather than silently dropping them', async () => {
    for (const url of ['https://example.com/\r\nX-Evil: 1', 'https://example.com/a\tb', 'https://exa\nmple.com/', ' https://example.com/', 'https://example.com/ x']) {
      expectError(await post('/v1/webhooks', { url, tier: 'confirmed' }), 400, 'invalid_request', { code: 'invalid_url', param: 'url' });
    }
  });
});
