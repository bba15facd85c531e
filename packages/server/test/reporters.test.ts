import { Value } from '@sinclair/typebox/value';
import { ListOf, One, Reporter } from '@svc/schema';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate } from '../src/domain/clock.js';
import { reporterIdOf } from '../src/domain/consensus/reporter-ids.js';
import { expectError } from './contract.js';
import { auth, engines, ManualClock, testApp, type TestApp } from './helpers.js';

interface Game {
  id: string;
  competition_id: string;
  competitors: { entity_id: string; role: string }[];
}

/**
 * The operator's view of the crowd through the API (docs/reporters.md), on each engine: the list
 * with its filters and pages, the flag rule on stored records, suspend and restore with what they
 * do to votes and to later reports, and the refusals (unknown reporter, no `admin`, bad filters).
 */
describe.each(engines())('reporters on %s', (engine) => {
  let t: TestApp;
  let admin: string;
  let viewer: string;
  const keys: { key: string; id: string }[] = [];
  let games: Game[];
  // Noon (UTC) of today: reports are taken on a game's own day; retractions come from ticks.
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));

  beforeAll(async () => {
    t = await testApp({ engine, clock });
    admin = await t.key({ products: ['admin'] });
    viewer = await t.key({ products: ['live', 'archive', 'report', 'source'] });
    for (let i = 0; i < 5; i++) {
      const key = await t.key({ products: ['report'] });
      keys.push({ key, id: (await get('/v1/me', key)).json().data.id });
    }
    games = (await get('/v1/games?date=today&sport=soccer&status=scheduled&limit=1000', viewer)).json().data as Game[];
    expect(games.length).toBeGreaterThanOrEqual(3);
  }, 60_000);
  afterAll(async () => t?.close());

  const get = (url: string, k: string | null = admin) => t.app.inject({ method: 'GET', url, headers: k ? auth(k) : {} });
  const post = (url: string, body?: unknown, k: string | null = admin) =>
    t.app.inject({ method: 'POST', url, ...(body === undefined ? {} : { payload: JSON.stringify(body) }), headers: { ...(k ? auth(k) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) } });
  const home = (g: Game) => String(g.competitors.find((c) => c.role === 'home')?.entity_id.split(':').pop());
  const away = (g: Game) => String(g.competitors.find((c) => c.role === 'away')?.entity_id.split(':').pop());
  const report = async (k: string, g: Game, team: string, extra: Record<string, unknown> = {}) => {
    const res = await post('/v1/reports', { game_id: g.id, team, points: 1, ...extra }, k);
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data[0] as { id: string; event_id: string | null; tier: string };
  };
  const page = (res: { statusCode: number; json(): unknown; body: string }) => {
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    if (!Value.Check(ListOf(Reporter), body)) throw new Error(`not the documented page: ${res.body.slice(0, 300)}`);
    return body;
  };
  const one = (res: { statusCode: number; json(): unknown; body: string }) => {
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    if (!Value.Check(One(Reporter), body)) throw new Error(`not the documented record: ${res.body.slice(0, 300)}`);
    return body.data;
  };
  const all = async (query = '') => {
    const out: Reporter[] = [];
    let cursor: string | null = null;
    do {
      const body = page(await get(`/v1/reporters?limit=1000${query}${cursor ? `&cursor=${cursor}` : ''}`));
      out.push(...body.data);
      cursor = body.next_cursor;
    } while (cursor);
    return out;
  };
  const count = async (table: 'reports' | 'events' | 'reporter_suspensions' | 'reporters') => Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const retractionOf = async (eventId: string) => t.db.kysely.selectFrom('events').select('seq').where('type', '=', 'score_retracted').where('retracted_id', '=', eventId).executeTakeFirst();

  it('lists every reporter with a track record, its counts, weight and flag; pages; filters by key and flag', async () => {
    const [a, b, c, loser] = keys;
    // a, b and c confirm a goal together; the loser reports three goals nobody backs, retracted after 90 s.
    for (const k of [a, b, c]) await report(k.key, games[0], home(games[0]));
    for (const g of games.slice(0, 3)) await report(loser.key, g, away(g));
    clock.advance(91_000);
    await t.services.live.ingest.tick();

    const listed = await all();
    const byKey = new Map(listed.map((r) => [r.key_id, r]));
    expect(byKey.get(a.id)).toMatchObject({ id: reporterIdOf(a.id), reporter: null, agreed: 1, disagreed: 0, reports: 1, flagged: false, suspended: false, official_confirmed: 0, official_contradicted: 0 });
    expect(byKey.get(a.id)?.weight).toBeCloseTo(2 / 3, 3);
    expect(byKey.get(a.id)?.last_report_at).toBe(new Date(clock.now() - 91_000).toISOString());
    // Three retractions, no confirmation: the rule's repeated retractions.
    expect(byKey.get(loser.id)).toMatchObject({ agreed: 0, disagreed: 3, reports: 3, flagged: true, suspended: false });
    expect(byKey.get(loser.id)?.weight).toBeCloseTo(0.2, 3);

    // Pages of one cover the same list, in the same order.
    const paged: Reporter[] = [];
    let cursor: string | null = null;
    do {
      const body = page(await get(`/v1/reporters?limit=1${cursor ? `&cursor=${cursor}` : ''}`));
      expect(body.data.length).toBeLessThanOrEqual(1);
      paged.push(...body.data);
      cursor = body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(listed);

    expect((await all(`&key=${a.id}`)).map((r) => r.key_id)).toEqual([a.id]);
    expect((await all('&flagged=true')).map((r) => r.key_id)).toEqual([loser.id]);
    expect((await all('&flagged=false')).map((r) => r.key_id)).not.toContain(loser.id);
    expect(await all('&suspended=true')).toEqual([]);
    // A filtered page of one still pages past the reporters it skips.
    const flaggedOne = page(await get('/v1/reporters?flagged=true&limit=1'));
    expect(flaggedOne.data.map((r) => r.key_id)).toEqual([loser.id]);
  });

  it('suspends a reporter: its lone provisional is retracted at once, later reports are stored with no event, and the suspension holds until restored', async () => {
    const troll = keys[4];
    const g = games[1];
    const invented = await report(troll.key, g, home(g), { event_type: 'goal' });
    expect(invented.event_id).toMatch(/^evt_/);
    const reportsBefore = await count('reports');

    const suspended = one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/suspend`));
    expect(suspended).toMatchObject({ id: reporterIdOf(troll.id), key_id: troll.id, reporter: null, suspended: true, reports: 1 });
    // At once, without a tick: the candidate had only its vote, so its provisional is retracted.
    expect(await retractionOf(String(invented.event_id))).toBeDefined();
    // The vote is gone from the store too: a node rebuilding the game would not count it.
    const stored = await t.db.kysely.selectFrom('reports').select('candidate_id').where('id', '=', invented.id).executeTakeFirstOrThrow();
    expect(stored.candidate_id).toBeNull();

    // Reports of a suspended reporter: 202 and stored, but they start and join nothing.
    const events = await count('events');
    const ignored = await report(troll.key, g, away(g), { event_type: 'goal' });
    expect(ignored).toMatchObject({ event_id: null, tier: 'provisional' });
    expect(ignored.id).toMatch(/^rpt_/);
    expect(await count('reports')).toBe(reportsBefore + 1);
    expect(await count('events')).toBe(events);
    // Neither a vote (b would complete a quorum with it) nor an active reporter holding the others'
    // agreement down (3 of 4 would still pass): c confirms, with the three others alone.
    const [a, b, c] = keys;
    await report(a.key, g, away(g));
    expect((await report(b.key, g, away(g))).tier).toBe('provisional');
    const confirmed = await report(c.key, g, away(g));
    expect(confirmed.tier).toBe('confirmed');
    const agreement = await t.db.kysely.selectFrom('events').select(['agreement', 'reporters']).where('tier', '=', 'confirmed').where('game_id', '=', g.id).executeTakeFirstOrThrow();
    // a, b and c weigh 2/3 each; the loser of the first test is still active here at 0.2. With the
    // troll counted among the active (0.5) it would be 2 / 2.7 = 0.741.
    expect(agreement).toMatchObject({ agreement: 0.909, reporters: 3 });

    // Suspending again changes nothing; the list shows it under suspended=true.
    expect(one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/suspend`))).toMatchObject({ suspended: true, reports: 2 });
    expect(await count('reporter_suspensions')).toBe(1);
    expect((await all('&suspended=true')).map((r) => r.key_id)).toEqual([troll.id]);

    const restored = one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/restore`));
    expect(restored).toMatchObject({ suspended: false });
    expect(await all('&suspended=true')).toEqual([]);
    const counted = await report(troll.key, games[2], home(games[2]));
    expect(counted.event_id).toMatch(/^evt_/);
    // Restoring one that is not suspended changes nothing.
    expect(one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/restore`))).toMatchObject({ suspended: false });
  });

  it('takes a suspended reporter’s vote out of a candidate others back: the play then needs another voter', async () => {
    const [a, b, c, , troll] = keys;
    const g = games[2];
    clock.advance(91_000);
    await t.services.live.ingest.tick();
    await report(a.key, g, away(g));
    await report(troll.key, g, away(g));
    one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/suspend`));
    // a and b: two voters, not the quorum the troll's vote would have completed.
    expect((await report(b.key, g, away(g))).tier).toBe('provisional');
    expect((await report(c.key, g, away(g))).tier).toBe('confirmed');
    one(await post(`/v1/reporters/${reporterIdOf(troll.id)}/restore`));
  });

  it('lists a key’s named reporters beside its own voice, counts official data’s verdicts on them, flags by the rule, and suspends and restores one by its id', async () => {
    // A soccer game the official feed covers, and a basketball game of the crowd alone.
    const g = games[3];
    const [h] = (await get('/v1/games?date=today&sport=basketball&status=scheduled&limit=1', viewer)).json().data as Game[];
    const app = await t.key({ products: ['report'] });
    const appId = (await get('/v1/me', app)).json().data.id as string;
    const source = await t.key({ products: ['source'] });
    const [x, y] = [await t.key({ products: ['report'] }), await t.key({ products: ['report'] })];
    const fan = (name: string) => `${appId}/${name}`;
    const plays = (game: Game, body: unknown) => post(`/v1/competitions/${game.competition_id}/plays`, body, source);
    const HALF1 = { unit: 'half', num: 1, label: '1st half' };
    clock.advance(91_000);
    await t.services.live.ingest.tick();

    // fan-1, named by the app, and two keys of their own confirm the home goal; the official feed has it too.
    expect((await report(app, g, home(g), { reporter: 'fan-1', clock: "10'" })).event_id).toBeNull();
    await report(x, g, home(g), { clock: "10'" });
    expect((await report(y, g, home(g), { clock: "10'" })).tier).toBe('confirmed');
    const official = await plays(g, { plays: [{ period: HALF1, competitor_id: g.competitors.find((c) => c.role === 'home')?.entity_id, event_type: 'kickoff', points: 0 }, { period: HALF1, competitor_id: g.competitors.find((c) => c.role === 'home')?.entity_id, event_type: 'goal', points: 1, clock: "10'" }] });
    expect(official.statusCode, official.body).toBe(201);
    // fan-2, also named by the app, invents an away goal; the final result does not hold it.
    clock.advance(60_000);
    expect((await report(app, g, away(g), { reporter: 'fan-2', clock: "11'" })).event_id).toBeNull();
    clock.advance(60_000);
    const final = await plays(g, { period: { unit: 'fulltime', num: 1, label: 'Full time' }, competitor_id: g.competitors.find((c) => c.role === 'home')?.entity_id, event_type: 'final', points: 0 });
    expect(final.statusCode, final.body).toBe(201);

    const ofApp = await all(`&key=${appId}`);
    expect(ofApp.map((r) => [r.id, r.key_id, r.reporter])).toEqual([
      [reporterIdOf(fan('fan-1')), appId, 'fan-1'],
      [reporterIdOf(fan('fan-2')), appId, 'fan-2'],
    ]);
    const [one1, one2] = ofApp;
    // Confirmed by the crowd and by official data: A = 2, D = 0, weight 3/4.
    expect(one1).toMatchObject({ reports: 1, agreed: 1, disagreed: 0, official_confirmed: 1, official_contradicted: 0, flagged: false, suspended: false });
    expect(one1.weight).toBeCloseTo(0.75, 3);
    // Contradicted by the final result: on probation, weighing less than a newcomer, flagged from the first contradiction.
    expect(one2).toMatchObject({ reports: 1, official_confirmed: 0, official_contradicted: 1, flagged: true, suspended: false });
    expect(one2.last_report_at).toBe(new Date(clock.now() - 60_000).toISOString());
    // Its candidate was also retracted when the game ended: A = 0, D = 1 + 3 × 1, weight 1/6.
    expect(one2).toMatchObject({ agreed: 0, disagreed: 1 });
    expect(one2.weight).toBeCloseTo(1 / 6, 3);
    expect((await all('&flagged=true')).map((r) => r.id)).toContain(reporterIdOf(fan('fan-2')));
    expect((await all('&flagged=false')).map((r) => r.id)).toContain(reporterIdOf(fan('fan-1')));

    // fan-1 has a record of its own now: it publishes alone. So does the app's own voice.
    const byFan = await report(app, h, home(h), { reporter: 'fan-1' });
    expect(byFan.event_id).toMatch(/^evt_/);
    const byApp = await report(app, h, away(h));
    expect(byApp.event_id).toMatch(/^evt_/);
    const ordered = await all(`&key=${appId}`);
    expect(ordered.map((r) => r.reporter)).toEqual([null, 'fan-1', 'fan-2']);

    const suspended = one(await post(`/v1/reporters/${reporterIdOf(fan('fan-1'))}/suspend`));
    expect(suspended).toMatchObject({ id: reporterIdOf(fan('fan-1')), key_id: appId, reporter: 'fan-1', suspended: true, reports: 2, official_confirmed: 1 });
    // At once: fan-1's lone provisional is retracted, the app's own voice keeps its own.
    expect(await retractionOf(String(byFan.event_id))).toBeDefined();
    expect(await retractionOf(String(byApp.event_id))).toBeUndefined();
    expect((await all('&suspended=true')).map((r) => [r.id, r.reporter])).toEqual([[reporterIdOf(fan('fan-1')), 'fan-1']]);
    // Only fan-1 is silenced: its reports start nothing, the key's own voice still counts.
    expect((await report(app, h, home(h), { reporter: 'fan-1', clock: "80'" })).event_id).toBeNull();
    clock.advance(10_000);
    expect((await report(app, h, home(h), { clock: "81'" })).event_id).toMatch(/^evt_/);

    expect(one(await post(`/v1/reporters/${reporterIdOf(fan('fan-1'))}/restore`))).toMatchObject({ reporter: 'fan-1', suspended: false, reports: 3 });
    expect(await all('&suspended=true')).toEqual([]);
    clock.advance(10_000);
    expect((await report(app, h, away(h), { reporter: 'fan-1', clock: "85'" })).event_id).toMatch(/^evt_/);
  });

  it('flags a reporter that floods: far more reports than its games had plays, whatever else it did', async () => {
    const app = await t.key({ products: ['report'] });
    const appId = (await get('/v1/me', app)).json().data.id as string;
    const [, g] = (await get('/v1/games?date=today&sport=basketball&status=scheduled&limit=2', viewer)).json().data as Game[];
    // 30 reports of one basket at once: one play, 29 repeats.
    const spammer = async () => (await all(`&key=${appId}`)).find((r) => r.reporter === 'spammer');
    for (let i = 0; i < 29; i++) await report(app, g, home(g), { reporter: 'spammer' });
    // 29 reports are not yet a flood (the rule starts at 30); the 30th is.
    expect(await spammer()).toMatchObject({ reports: 29, flagged: false });
    await report(app, g, home(g), { reporter: 'spammer' });
    expect(await spammer()).toMatchObject({ reports: 30, agreed: 0, disagreed: 0, official_contradicted: 0, flagged: true });
    clock.advance(91_000);
    await t.services.live.ingest.tick();
    // Its one play was retracted: 30 reports for 1 play is still more than 10 a play.
    expect(await spammer()).toMatchObject({ reports: 30, disagreed: 1, flagged: true });
    expect((await all('&flagged=true')).map((r) => r.id)).toContain(reporterIdOf(`${appId}/spammer`));
  });

  it('suspends and restores a reporter by its longest id: a name of 128 CJK characters', async () => {
    const app = await t.key({ products: ['report'] });
    const appId = (await get('/v1/me', app)).json().data.id as string;
    const name = '漢'.repeat(128);
    await report(app, games[0], away(games[0]), { reporter: name });
    const [listed] = await all(`&key=${appId}`);
    expect(listed).toMatchObject({ reporter: name, reports: 1 });
    expect(listed.id).toMatch(/^rep_~/);
    expect(listed.id.length).toBeLessThanOrEqual(405);
    expect(one(await post(`/v1/reporters/${listed.id}/suspend`))).toMatchObject({ id: listed.id, reporter: name, suspended: true });
    expect(one(await post(`/v1/reporters/${listed.id}/restore`))).toMatchObject({ id: listed.id, suspended: false });
  });

  it('answers an unknown reporter with a 404 in the documented body, and stores nothing', async () => {
    const before = await count('reporter_suspensions');
    const records = await count('reporters');
    for (const id of ['rep_nothing', reporterIdOf('key_0000000000000000'), reporterIdOf(`${keys[0].id}/never-reported`), 'rpt_abc', 'x'.repeat(405)]) {
      for (const verb of ['suspend', 'restore']) expectError(await post(`/v1/reporters/${encodeURIComponent(id)}/${verb}`), 404, 'not_found', { code: 'resource_not_found' });
    }
    expect(await count('reporter_suspensions')).toBe(before);
    // Not even an empty track record (which would list it).
    expect(await count('reporters')).toBe(records);
  });

  it('refuses keys without admin, requests without a key, and bad filters', async () => {
    const id = reporterIdOf(keys[0].id);
    const before = await count('reporter_suspensions');
    for (const k of [viewer, keys[0].key]) {
      expectError(await get('/v1/reporters', k), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await post(`/v1/reporters/${id}/suspend`, undefined, k), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await post(`/v1/reporters/${id}/restore`, undefined, k), 403, 'permission_error', { code: 'product_not_in_plan' });
    }
    expectError(await get('/v1/reporters', null), 401, 'authentication_error', { code: 'missing_api_key' });
    expectError(await post(`/v1/reporters/${id}/suspend`, undefined, 'svc_test_0000000000000000000000000000dead'), 401, 'authentication_error', { code: 'invalid_api_key' });
    expect(await count('reporter_suspensions')).toBe(before);
    expect(one(await get(`/v1/reporters?key=${keys[0].id}`).then((r) => ({ ...r, json: () => ({ data: r.json().data[0] }) })))).toMatchObject({ suspended: false });

    expectError(await get('/v1/reporters?flagged=yes'), 400, 'invalid_request', { param: 'flagged' });
    expectError(await get('/v1/reporters?suspended=1'), 400, 'invalid_request', { param: 'suspended' });
    expectError(await get('/v1/reporters?key=not-a-key'), 400, 'invalid_request', { param: 'key' });
    expectError(await get('/v1/reporters?limit=0'), 400, 'invalid_request', { param: 'limit' });
    expectError(await get('/v1/reporters?limit=1001'), 400, 'invalid_request', { param: 'limit' });
    expectError(await get('/v1/reporters?cursor=bm90LWEtY3Vyc29y'), 400, 'invalid_request', { code: 'invalid_cursor' });
    expectError(await get('/v1/reporters?weight=1'), 400, 'invalid_request', { code: 'unknown_parameter' });
  });
});

/**
 * A write that moved a voter's record in the engine and failed in the database: the node reads
 * that record again before the voter's next decision, in any game (live/ingest.ts), on each engine.
 */
describe.each(engines())('a failed write’s record moves on %s', (engine) => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));
  beforeAll(async () => {
    t = await testApp({ engine, clock });
  }, 60_000);
  afterAll(async () => t?.close());

  const request = (method: 'GET' | 'POST', url: string, k: string, body?: unknown) =>
    t.app.inject({ method, url, ...(body === undefined ? {} : { payload: JSON.stringify(body) }), headers: { ...auth(k), ...(body === undefined ? {} : { 'content-type': 'application/json' }) } });
  // A fault in the database itself: this key's track-record row refuses a contradiction.
  const failRecordWrites = async (keyId: string) => {
    if (engine === 'sqlite') {
      await sql`create trigger fail_record before update on reporters when new.key_id = ${sql.lit(keyId)} and new.official_contradicted > 0 begin select raise(abort, 'injected fault'); end`.execute(t.db.kysely);
      return;
    }
    await sql`create function fail_record() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`.execute(t.db.kysely);
    await sql`create trigger fail_record before insert or update on reporters for each row when (new.key_id = ${sql.lit(keyId)} and new.official_contradicted > 0) execute function fail_record()`.execute(t.db.kysely);
  };
  const allowRecordWrites = async () => {
    await sql`drop trigger fail_record${sql.raw(engine === 'sqlite' ? '' : ' on reporters')}`.execute(t.db.kysely);
    if (engine !== 'sqlite') await sql`drop function fail_record()`.execute(t.db.kysely);
  };

  it('weighs the voter on its stored record again: a contradiction never stored does not hold it back in another game', async () => {
    const [admin, v, source] = [await t.key(), await t.key({ products: ['report'] }), await t.key({ products: ['source'] })];
    const vId = (await request('GET', '/v1/me', v)).json().data.id as string;
    const [g1, g2] = (await request('GET', '/v1/games?date=today&sport=soccer&status=scheduled&limit=2', admin)).json().data as Game[];
    const team = (g: Game, role: string) => String(g.competitors.find((c) => c.role === role)?.entity_id.split(':').pop());
    const report = async (g: Game, role: string, at: string) => {
      const res = await request('POST', '/v1/reports', v, { game_id: g.id, team: team(g, role), points: 1, clock: at });
      expect(res.statusCode, res.body).toBe(202);
      return res.json().data[0] as { event_id: string | null };
    };
    // Its own first report publishes alone (section 4); g1's final result will not hold it.
    expect((await report(g1, 'away', "11'")).event_id).not.toBeNull();
    // The write of the final's verdict on it (a contradiction: probation, no publishing alone) fails in the database.
    await failRecordWrites(vId);
    clock.advance(60_000);
    const final = await request('POST', `/v1/competitions/${g1.competition_id}/plays`, source, { period: { unit: 'fulltime', num: 1, label: 'Full time' }, competitor_id: g1.competitors.find((c) => c.role === 'home')?.entity_id, event_type: 'final', points: 0 });
    expect(final.statusCode, final.body).toBeGreaterThanOrEqual(500);
    await allowRecordWrites();
    const listed = (await request('GET', `/v1/reporters?key=${vId}`, admin)).json().data as Reporter[];
    expect(listed).toMatchObject([{ reports: 1, official_contradicted: 0, flagged: false }]);
    // Weighed on what is stored, not on the engine's unstored move: it still publishes alone in g2.
    clock.advance(60_000);
    expect((await report(g2, 'home', "20'")).event_id).not.toBeNull();
  });
});
