import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate, ManualClock } from '../src/domain/clock.js';
import { createTodayGame } from '../src/sim/fixtures.js';
import { seededRandom } from '../src/sim/index.js';
import { expectError } from './contract.js';
import { auth, engines, testApp, type TestApp } from './helpers.js';

/**
 * Each attack of the threat model (docs/consensus.md "Threat model") through the public API on
 * both engines: what the attackers send, and what subscribers then see. The app's clock is a
 * manual one and the consensus worker's tick is called by the test, so waits of seconds or
 * minutes take none.
 */
interface Game {
  id: string;
  competition_id: string;
  competitors: { entity_id: string; role: string }[];
}
interface StoredEvent {
  id: string;
  type: string;
  tier: string;
  team: string;
  points: number;
  confidence: { agreement: number; reporters: number; probability: number };
  retracted_id?: string;
}

describe.each(engines())('attacks through the public API (%s)', (engine) => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));
  let games: Game[] = [];
  let source = '';
  let viewer = '';
  let next = 0;

  beforeAll(async () => {
    t = await testApp({ engine, clock });
    viewer = await t.key({ products: ['live', 'archive'] });
    source = await t.key({ products: ['source'] });
    // A game per test: presence and the flood limit are per game.
    const random = seededRandom(54);
    for (let i = 0; i < 8; i++) await createTodayGame(t.db, 'basketball', isoDate(clock.now()), clock.now(), random);
    const list = (await t.app.inject({ url: '/v1/competitions?date=today&sport=basketball&limit=100', headers: auth(viewer) })).json().data as Game[];
    games = list.filter((g: Game & { status?: string }) => g.status === 'scheduled').map((g) => ({ ...g, competition_id: g.id, id: `basketball_${g.id.split('_').pop()}` }));
    expect(games.length).toBeGreaterThanOrEqual(8);
  });
  afterAll(async () => t?.close());

  /** A game of the test's own (presence and the flood limit are per game). */
  const game = () => games[next++];
  const code = (g: Game, role = 'home') => String(g.competitors.find((c) => c.role === role)?.entity_id.split(':').pop());
  const keys = (n: number) => Promise.all(Array.from({ length: n }, () => t.key({ products: ['report'] })));
  const at = (msAgo = 0) => new Date(clock.now() - msAgo).toISOString();
  const report = async (key: string, body: object) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: auth(key), payload: body });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data as { id: string; event_id: string | null; tier: string }[];
  };
  /** Every event published for the game, provisional and retractions included (REST lists confirmed ones). */
  const events = async (g: Game): Promise<StoredEvent[]> => {
    const rows = await t.db.kysely.selectFrom('events').select(['seq', 'json_tail']).where('game_id', '=', g.id).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(`{"id":"evt_${String(r.seq).padStart(12, '0')}"${r.json_tail}`) as StoredEvent);
  };
  const tick = async (ms: number) => {
    clock.advance(ms);
    await t.services.live.ingest.tick();
  };
  /** The official play of a basket the crowd saw `msAgo` ago: it confirms it and judges the game's votes. */
  const official = async (g: Game, msAgo: number, role = 'home', points = 2) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/competitions/${g.competition_id}/plays`,
      headers: auth(source),
      payload: { period: { unit: 'quarter', num: 1, label: 'Q1' }, competitor_id: g.competitors.find((c) => c.role === role)?.entity_id, event_type: 'two_pointer', points, ts: at(msAgo) },
    });
    expect(res.statusCode, res.body).toBe(201);
  };
  /** Keys whose plays official data confirmed `plays` times on `g` (their records), `spacing` apart. */
  const withRecords = async (g: Game, ks: string[], plays: number) => {
    for (let i = 0; i < plays; i++) {
      const ago = (plays - i) * 60_000;
      for (const k of ks) await report(k, { game_id: g.id, team: code(g), points: 2, observed_at: at(ago) });
      await official(g, ago);
    }
  };

  it('troll: an invented score goes out at once (the key’s own voice) and is taken back in 25 s, not 90; after official data contradicts it, the troll cannot publish alone', async () => {
    const g = game();
    const [h1, h2, troll] = await keys(3);
    await report(h1, { game_id: g.id, team: code(g), points: 2, observed_at: at(600_000) });
    await report(h2, { game_id: g.id, team: code(g), points: 2, observed_at: at(600_000) });
    await tick(300_000);
    const [invented] = await report(troll, { game_id: g.id, team: code(g, 'away'), points: 3 });
    expect(invented.event_id).not.toBeNull();
    await tick(24_000);
    expect((await events(g)).filter((e) => e.retracted_id === invented.event_id)).toEqual([]);
    await tick(1_000);
    const retracted = (await events(g)).filter((e) => e.retracted_id === invented.event_id);
    expect(retracted).toHaveLength(1);
    // A real basket is played after it; its official play passes the invented score: contradicted.
    await tick(60_000);
    await official(g, 0);
    const [again] = await report(troll, { game_id: g.id, team: code(g, 'away'), points: 1 });
    expect(again.event_id).toBeNull();
  });

  it('swarm: twelve reporters named under one key, and the key itself, are one voice: nothing is published or confirmed', async () => {
    const g = game();
    const [app] = await keys(1);
    const before = (await events(g)).length;
    const swarm = Array.from({ length: 12 }, (_, i) => ({ game_id: g.id, team: code(g), points: 3, reporter: `sock-${i}` }));
    const answers = await report(app, { reports: swarm });
    expect(answers.every((a) => a.event_id === null)).toBe(true);
    const [own] = await report(app, { game_id: g.id, team: code(g), points: 3 });
    // The key's own voice publishes (section 4), but two voices of one key confirm nothing.
    expect(own.tier).toBe('provisional');
    const after = await events(g);
    expect(after.filter((e) => e.tier === 'confirmed')).toHaveLength(0);
    expect(after.length - before).toBeLessThanOrEqual(1);
    // Every report is stored, each under its reporter.
    const keyId = (await t.app.inject({ url: '/v1/me', headers: auth(app) })).json().data.id as string;
    const stored = await t.db.kysely.selectFrom('reports').select('reporter').where('game_id', '=', g.id).where('key_id', '=', keyId).execute();
    expect(stored.map((r) => r.reporter).sort()).toEqual([null, ...swarm.map((r) => r.reporter)].sort());
  });

  it('colluders: three keys posting the same invented score within seconds confirm nothing while the game’s reporters stay silent', async () => {
    const g = game();
    const honest = await keys(3);
    await withRecords(g, honest, 3);
    // Ten minutes of quiet: beyond the 2-minute agreement window, still present.
    await tick(600_000);
    const colluders = await keys(3);
    for (const [i, k] of colluders.entries()) {
      await report(k, { game_id: g.id, team: code(g, 'away'), points: 3, observed_at: at(1_000 - i * 300) });
      clock.advance(400);
    }
    expect((await events(g)).filter((e) => e.tier === 'confirmed' && e.team === code(g, 'away'))).toEqual([]);
  });

  it('sleepers: three keys with records as good as the honest crowd’s lie together and confirm nothing', async () => {
    const g = game();
    const honest = await keys(3);
    const sleepers = await keys(3);
    await withRecords(g, [...honest, ...sleepers], 3);
    await tick(600_000);
    for (const k of sleepers) await report(k, { game_id: g.id, team: code(g, 'away'), points: 3 });
    expect((await events(g)).filter((e) => e.tier === 'confirmed' && e.team === code(g, 'away'))).toEqual([]);
  });

  it('flippers: a real basket reported for the wrong team first is not confirmed; the crowd’s is', async () => {
    const g = game();
    const honest = await keys(3);
    await withRecords(g, honest, 3);
    await tick(600_000);
    const flippers = await keys(3);
    for (const k of flippers) await report(k, { game_id: g.id, team: code(g, 'away'), points: 2 });
    for (const k of honest) await report(k, { game_id: g.id, team: code(g), points: 2 });
    const confirmed = (await events(g)).filter((e) => e.tier === 'confirmed' && e.type === 'score');
    expect(confirmed.filter((e) => e.team === code(g, 'away'))).toEqual([]);
    expect(confirmed.filter((e) => e.team === code(g)).length).toBeGreaterThan(3);
  });

  it('flood: one key sending 32 invented baskets of one game puts two on the stream; every report is stored', async () => {
    const g = game();
    const [flooder] = await keys(1);
    const flood = Array.from({ length: 32 }, (_, i) => ({ game_id: g.id, team: code(g, i % 2 ? 'away' : 'home'), points: 3, observed_at: at(i * 31_000) }));
    const answers = await report(flooder, { reports: flood });
    expect(answers.filter((a) => a.event_id !== null)).toHaveLength(2);
    expect((await events(g)).filter((e) => e.tier === 'provisional' && e.type === 'score')).toHaveLength(2);
    const stored = await t.db.kysely.selectFrom('reports').select((eb) => eb.fn.countAll().as('n')).where('game_id', '=', g.id).executeTakeFirst();
    expect(Number(stored?.n)).toBe(32);
  });

  it('every event carries a probability with 3 decimals; official events carry 1', async () => {
    const g = game();
    const [a, b, c] = await keys(3);
    for (const k of [a, b, c]) await report(k, { game_id: g.id, team: code(g), points: 2 });
    await official(g, 60_000, 'away');
    const all = await events(g);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const e of all) {
      expect(e.confidence.probability).toBeGreaterThanOrEqual(0);
      expect(e.confidence.probability).toBeLessThanOrEqual(1);
      expect(Math.round(e.confidence.probability * 1000) / 1000).toBe(e.confidence.probability);
    }
    const crowd = all.filter((e) => e.team === code(g));
    expect(crowd.every((e) => e.confidence.probability < 1)).toBe(true);
    expect(all.filter((e) => e.team === code(g, 'away')).map((e) => e.confidence.probability)).toEqual([1]);
  });

  it('refuses an empty or too long reporter with 400 naming it, and stores nothing', async () => {
    const g = game();
    const [k] = await keys(1);
    const count = async () => Number((await t.db.kysely.selectFrom('reports').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n);
    const before = await count();
    const post = (body: object) => t.app.inject({ method: 'POST', url: '/v1/reports', headers: auth(k), payload: body });
    const one = { game_id: g.id, team: code(g), points: 2 };
    expectError(await post({ ...one, reporter: '' }), 400, 'invalid_request', { param: 'reporter' });
    expectError(await post({ ...one, reporter: 'x'.repeat(129) }), 400, 'invalid_request', { param: 'reporter' });
    expectError(await post({ ...one, reporter: 7 }), 400, 'invalid_request', { param: 'reporter' });
    expectError(await post({ reports: [{ ...one, reporter: 'fine' }, { ...one, reporter: '' }] }), 400, 'invalid_request', { param: 'reports[1].reporter' });
    expect(await count()).toBe(before);
    // 128 characters are fine.
    expect((await post({ ...one, reporter: 'x'.repeat(128) })).statusCode).toBe(202);
  });
});
