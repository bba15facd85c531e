import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate } from '../src/domain/clock.js';
import { hashKey } from '../src/domain/keys.js';
import { ConfigError, keyPrefix, loadConfig } from '../src/config.js';
import { parseSimulateArgs, SimulateUsageError } from '../src/sim/cli.js';
import { seededRandom, startSimulator, type Simulator } from '../src/sim/index.js';
import { deriveKey, ensureSimKeys, simSecret } from '../src/sim/keys.js';
import { GameClock, planCrowd, planOfficial, planTiming, DEFAULT_CROWD, DEFAULT_OFFICIAL } from '../src/sim/plan.js';
import { loadReplay, loadTarget, pickSource, sourcePool } from '../src/sim/replay.js';
import { auth, engines, sleep, testApp, until, type TestApp } from './helpers.js';
import { connect, type Frame, type StreamClient } from './ws-client.js';

describe.each(engines())('live simulator (%s)', (engine) => {
  let t: TestApp;
  let base: string;
  let liveKey: string;

  beforeAll(async () => {
    t = await testApp({ engine });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    if (!addr || typeof addr === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${addr.port}`;
    liveKey = await t.key({ products: ['live'] });
  });
  afterAll(async () => {
    await t.close();
  });

  const status = async (competitionId: string) =>
    (await t.db.kysely.selectFrom('competitions').select('status').where('id', '=', competitionId).executeTakeFirstOrThrow()).status;

  it('derives its keys from a stored secret: same keys every time, only hashes stored, deployment prefix', async () => {
    const secret = await simSecret(t.db);
    expect(await simSecret(t.db)).toBe(secret);
    const prefix = keyPrefix(t.services.config.env);
    const k = deriveKey(secret, 'reporter-3', prefix);
    expect(k).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
    expect(deriveKey(secret, 'reporter-3', prefix)).toBe(k);
    expect(deriveKey(secret, 'reporter-4', prefix)).not.toBe(k);

    const first = await ensureSimKeys(t.db, t.services.config, 6, new Date());
    const again = await ensureSimKeys(t.db, t.services.config, 6, new Date());
    expect(again.reporters.map((r) => r.keyId)).toEqual(first.reporters.map((r) => r.keyId));
    expect(first.reporters).toHaveLength(6);
    const rows = await t.db.kysely.selectFrom('api_keys').selectAll().where('name', 'like', 'simulator:%').execute();
    expect(rows).toHaveLength(7);
    expect(rows.some((r) => r.hash === hashKey(first.reporters[2].key))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(first.reporters[2].key);
    const official = rows.find((r) => r.name === 'simulator: official feed');
    expect(JSON.parse(official?.products ?? '[]')).toEqual(['source']);
    expect(rows.filter((r) => r.products === '["report"]')).toHaveLength(6);
  });

  it('plans a replay: crowd before the official feed, fakes away from real plays, plays in order', async () => {
    const today = isoDate(Date.now());
    const game = await t.db.kysely.selectFrom('competitions').select('id').where('sport', '=', 'basketball').where('date', '=', today).executeTakeFirstOrThrow();
    const target = await loadTarget(t.db, game.id);
    if (!target) throw new Error('no target');
    const pool = await sourcePool(t.db, 'basketball');
    const sourceId = pickSource(pool, target.competitionId);
    expect(sourceId).toBe(pickSource(pool, target.competitionId));
    if (!sourceId) throw new Error('no source');
    const replay = await loadReplay(t.db, target, sourceId);
    // 48 minutes of play plus short breaks: about 5 minutes at the default 10×.
    expect(replay.duration / 60).toBeGreaterThan(48);
    expect(replay.duration / 60).toBeLessThan(75);
    expect(replay.plays.every((p) => p.team === target.home.code || p.team === target.away.code)).toBe(true);

    const gc = new GameClock(Date.parse('2026-06-11T12:00:00Z'), 10, replay.duration);
    const timing = planTiming(10);
    const crowd = planCrowd(replay, gc, DEFAULT_CROWD, timing, seededRandom(1));
    const plays = planOfficial(replay, gc, DEFAULT_OFFICIAL, timing, seededRandom(1));
    // observed_at never lies in the future of the moment the report is sent.
    for (const s of crowd) for (const r of s.reports) expect(Date.parse(r.observed_at ?? '')).toBeLessThanOrEqual(s.at);
    const fakes = crowd.flatMap((s) => s.reports.filter((_, i) => s.fake[i]));
    expect(fakes.length).toBeGreaterThan(0);
    for (const f of fakes) {
      const at = (Date.parse(f.observed_at ?? '') - gc.world(0)) / 1000;
      expect(replay.plays.some((p) => p.points === f.points && Math.abs(p.at - at) < 30)).toBe(false);
    }
    expect(plays[0].plays[0]).toMatchObject({ event_type: 'tipoff', points: 0 });
    const all = plays.flatMap((s) => s.plays);
    expect(all[all.length - 1].event_type).toBe('final');
    expect(plays.map((s) => s.at)).toEqual([...plays.map((s) => s.at)].sort((a, b) => a - b));
    // The official lag (15–40 s at 10×) leaves the crowd's median delay (~1.5 s) far ahead.
    const firstScore = replay.plays.find((p) => p.points > 0);
    const officialAt = plays.find((s) => s.plays.some((p) => p.points > 0))?.at ?? 0;
    expect(officialAt - gc.real(firstScore?.at ?? 0)).toBeGreaterThanOrEqual(15_000);
  });

  it('takes its attackers from SVC_SIMULATOR_ATTACKS: all by default, none, or a list; a wrong name stops the start', () => {
    expect(loadConfig({}).simulatorAttacks).toEqual(['troll', 'swarm', 'colluders', 'sleepers', 'flippers']);
    expect(loadConfig({ SVC_SIMULATOR_ATTACKS: 'none' }).simulatorAttacks).toEqual([]);
    expect(loadConfig({ SVC_SIMULATOR_ATTACKS: '' }).simulatorAttacks).toEqual([]);
    expect(loadConfig({ SVC_SIMULATOR_ATTACKS: 'flippers, swarm,flippers' }).simulatorAttacks).toEqual(['flippers', 'swarm']);
    expect(() => loadConfig({ SVC_SIMULATOR_ATTACKS: 'troll,ddos' })).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_SIMULATOR_ATTACKS: 'troll,ddos' })).toThrow(/SVC_SIMULATOR_ATTACKS/);
  });

  it('rejects bad CLI options with a clear message', () => {
    const cfg = t.services.config;
    expect(parseSimulateArgs([], cfg)).toEqual({ url: `http://127.0.0.1:${cfg.port}`, speed: 10 });
    expect(parseSimulateArgs(['--url', 'http://localhost:9000', '--speed=25'], cfg)).toEqual({ url: 'http://localhost:9000', speed: 25 });
    expect(() => parseSimulateArgs(['--speed', '0'], cfg)).toThrow(SimulateUsageError);
    expect(() => parseSimulateArgs(['--speed', 'fast'], cfg)).toThrow(/--speed/);
    expect(() => parseSimulateArgs(['--url', 'ftp://x'], cfg)).toThrow(/--url/);
    expect(() => parseSimulateArgs(['--turbo'], cfg)).toThrow(/unknown option/);
  });

  it('replays today’s games through the HTTP API, end to end over a real stream', async () => {
    const stream: StreamClient = await connect(`${base.replace('http', 'ws')}/v1/stream`, liveKey);
    const today = isoDate(Date.now());
    const scheduled = await t.db.kysely.selectFrom('competitions').select(['id', 'sport']).where('date', '=', today).where('status', '=', 'scheduled').execute();
    expect(scheduled.filter((c) => c.sport === 'soccer').length).toBeGreaterThan(0);

    const sim: Simulator = await startSimulator({ baseUrl: base, db: t.db, config: t.services.config, speed: 1000, random: seededRandom(42) });
    try {
      const games = sim.games();
      expect(games.map((g) => g.sport).sort()).toEqual(['basketball', 'soccer']);
      expect(sim.activity()).toMatchObject({ running: 2 });
      expect(sim.activity().timers).toBeGreaterThan(0);
      const soccer = games.find((g) => g.sport === 'soccer');
      if (!soccer) throw new Error('no soccer game');
      // scheduled → live: the opening play went out before startSimulator resolved.
      for (const g of games) {
        expect(scheduled.map((c) => c.id)).toContain(g.competitionId);
        expect(await status(g.competitionId)).toBe('live');
      }

      await stream.until((c) => c.events().some((e) => e.tier === 'provisional' && e.type === 'score'), 10_000, 'a provisional event');
      await stream.until((c) => c.events().some((e) => e.tier === 'confirmed' && typeof e.provisional_id === 'string'), 10_000, 'a confirmed event naming its provisional');
      const byId = new Map<unknown, Frame>(stream.events().map((e) => [e.id, e]));
      const confirmed = stream.events().find((e) => e.tier === 'confirmed' && typeof e.provisional_id === 'string');
      expect(byId.get(confirmed?.provisional_id)).toMatchObject({ tier: 'provisional', game_id: confirmed?.game_id, team: confirmed?.team, points: confirmed?.points });

      // live → final, at 1000× a match takes a few seconds.
      await until(() => sim.games().find((g) => g.gameId === soccer.gameId)?.state === 'final', 30_000, 'the soccer replay to end');
      expect(await status(soccer.competitionId)).toBe('final');

      // Its confirmed goals are the source match's goals, team for team (home → home, away → away).
      const source = await t.db.kysely
        .selectFrom('plays as p')
        .innerJoin('competitors as c', (j) => j.onRef('c.competition_id', '=', 'p.competition_id').onRef('c.entity_id', '=', 'p.competitor_id'))
        .select(['c.role', 'p.points'])
        .where('p.competition_id', '=', soccer.sourceId)
        .where('p.points', '>', 0)
        .execute();
      const expected = { [soccer.home]: source.filter((p) => p.role === 'home').length, [soccer.away]: source.filter((p) => p.role === 'away').length };
      const res = await t.app.inject({ url: `/v1/games/${soccer.gameId}/events?limit=1000`, headers: auth(liveKey) });
      expect(res.statusCode).toBe(200);
      const events: { type: string; tier: string; team: string; points: number; id: string; provisional_id?: string | null }[] = res.json().data;
      const goals = events.filter((e) => e.type === 'score' && e.tier === 'confirmed');
      expect({ [soccer.home]: goals.filter((e) => e.team === soccer.home).length, [soccer.away]: goals.filter((e) => e.team === soccer.away).length }).toEqual(expected);
      const score = await t.db.kysely.selectFrom('competitors').select(['role', 'score']).where('competition_id', '=', soccer.competitionId).execute();
      expect(Object.fromEntries(score.map((s) => [s.role, s.score]))).toEqual({ home: expected[soccer.home], away: expected[soccer.away] });

      // The dishonest reporter's inventions got provisionals and nothing more.
      const fakes = sim.fakes();
      expect(fakes.length).toBeGreaterThan(0);
      const fakeIds = new Set(fakes.map((f) => f.eventId).filter((id): id is string => id !== null));
      expect(fakeIds.size).toBeGreaterThan(0);
      const confirmedRows = await t.db.kysely
        .selectFrom('events')
        .select(['seq', 'provisional_id'])
        .where('tier', '=', 'confirmed')
        .where('game_id', 'in', games.map((g) => g.gameId))
        .execute();
      expect(confirmedRows.length).toBeGreaterThan(0);
      for (const row of confirmedRows) expect(fakeIds.has(row.provisional_id ?? '')).toBe(false);
      for (const f of stream.events()) if (f.tier === 'confirmed') expect(fakeIds.has(String(f.provisional_id))).toBe(false);
      expect(fakes.every((f) => f.tier === 'provisional')).toBe(true);
      // Every attacker of SVC_SIMULATOR_ATTACKS (all of them by default) played, and none got a score confirmed.
      expect(t.services.config.simulatorAttacks).toEqual(['troll', 'swarm', 'colluders', 'sleepers', 'flippers']);
      expect(new Set(fakes.map((f) => f.attack))).toEqual(new Set(['troll', 'swarm', 'colluders', 'sleepers', 'flippers']));
    } finally {
      await sim.stop();
    }
    expect(sim.games().every((g) => g.state !== 'running')).toBe(true);
    // Nothing of the simulator is left ticking or in flight, and nothing reaches the service any more.
    expect(sim.activity()).toEqual({ running: 0, timers: 0, inflight: 0 });
    const count = async () => {
      const reports = await t.db.kysely.selectFrom('reports').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      const plays = await t.db.kysely.selectFrom('plays').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      return [Number(reports.n), Number(plays.n)];
    };
    const after = await count();
    await sleep(500);
    expect(await count()).toEqual(after);
    stream.close();
  });

  it('creates a fresh game when today has none left, and ends replays a stopped run left half-way', async () => {
    const today = isoDate(Date.now());
    await t.db.kysely.updateTable('competitions').set({ status: 'final' }).where('date', '=', today).where('sport', 'in', ['soccer', 'basketball']).where('status', '=', 'scheduled').execute();
    const opts = { baseUrl: base, db: t.db, config: t.services.config, speed: 10, intervalMs: 3_600_000 };
    const first = await startSimulator({ ...opts, random: seededRandom(7) });
    await first.stop();
    const created = first.games();
    expect(created.map((g) => g.sport).sort()).toEqual(['basketball', 'soccer']);
    for (const g of created) {
      const c = await t.db.kysely.selectFrom('competitions').selectAll().where('id', '=', g.competitionId).executeTakeFirstOrThrow();
      expect(c).toMatchObject({ date: today, synthetic: 1, status: 'live' });
      expect(c.source_key).toMatch(/^sim:/);
      expect(g.state).toBe('stopped');
    }
    // The season covers the new game, so the REST views find it.
    const res = await t.app.inject({ url: `/v1/games/${created[0].gameId}`, headers: auth(liveKey) });
    expect(res.statusCode).toBe(200);

    // A new run ends the half-played replays instead of leaving them live forever, then starts fresh ones.
    const second = await startSimulator({ ...opts, random: seededRandom(8) });
    try {
      for (const g of created) expect(await status(g.competitionId)).toBe('final');
      const now = second.games();
      expect(now.map((g) => g.sport).sort()).toEqual(['basketball', 'soccer']);
      for (const g of now) {
        expect(created.map((c) => c.competitionId)).not.toContain(g.competitionId);
        expect(await status(g.competitionId)).toBe('live');
      }
    } finally {
      await second.stop();
    }
  });
});
