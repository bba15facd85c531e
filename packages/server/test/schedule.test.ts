import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPETITION_STATUSES, type CompetitionStatus } from '@svc/schema';
import { TRANSITIONS, canMove, planStatusChange } from '../src/domain/schedule/lifecycle.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { expectError } from './contract.js';
import { auth, engines, listen, ManualClock, testApp, type TestApp } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { connect, type StreamClient } from './ws-client.js';

interface Competition {
  id: string;
  sport: string;
  league: string;
  season_id: string;
  date: string;
  status: string;
  start_time: string | null;
  original_start_time: string | null;
  status_reason: string | null;
  competitors: { entity_id: string; role: string }[];
}

/** How a fresh scheduled competition reaches each status through allowed moves. */
const PATH: Record<CompetitionStatus, CompetitionStatus[]> = {
  scheduled: [],
  live: ['live'],
  final: ['live', 'final'],
  postponed: ['postponed'],
  suspended: ['live', 'suspended'],
  cancelled: ['cancelled'],
};

describe('domain/schedule lifecycle', () => {
  const at = { start_time: '2026-06-11T18:00:00.000Z', original_start_time: null, date: '2026-06-11' };
  it('allows exactly the documented moves', () => {
    const allowed = COMPETITION_STATUSES.flatMap((from) => COMPETITION_STATUSES.filter((to) => canMove(from, to)).map((to) => `${from}>${to}`));
    expect(allowed.sort()).toEqual(
      ['scheduled>live', 'scheduled>postponed', 'scheduled>cancelled', 'live>final', 'live>suspended', 'suspended>live', 'suspended>final', 'suspended>cancelled', 'postponed>scheduled', 'postponed>cancelled'].sort(),
    );
    expect(TRANSITIONS.final).toEqual([]);
  });
  it('keeps the first announced start and moves the date with the start', () => {
    const p = planStatusChange({ status: 'postponed', ...at }, { status: 'scheduled', start_time: '2026-06-13T20:30:00+02:00' });
    expect(p).toMatchObject({ status: 'scheduled', start_time: '2026-06-13T18:30:00.000Z', original_start_time: '2026-06-11T18:00:00.000Z', date: '2026-06-13' });
    const again = planStatusChange({ status: 'postponed', start_time: '2026-06-13T18:30:00.000Z', original_start_time: '2026-06-11T18:00:00.000Z', date: '2026-06-13' }, { status: 'scheduled', start_time: '2026-06-20T18:00:00Z' });
    expect(again?.original_start_time).toBe('2026-06-11T18:00:00.000Z');
    expect(planStatusChange({ status: 'live', ...at }, { status: 'live' })).toBeNull();
    expect(() => planStatusChange({ status: 'postponed', ...at }, { status: 'scheduled' })).toThrow(/start_time/);
    expect(() => planStatusChange({ status: 'live', ...at }, { status: 'suspended', start_time: '2026-06-12T00:00:00Z' })).toThrow(/start_time/);
  });
});

describe.each(engines())('schedule lifecycle on %s', (engine) => {
  let t: TestApp;
  let clock: ManualClock;
  let admin: string;
  let source: string;
  let reporter: string;
  let base: { http: string; ws: string };
  let pool: Competition[];
  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    t = await testApp({ engine, clock, config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    admin = await t.key();
    source = await t.key({ products: ['source'] });
    reporter = await t.key({ products: ['report'] });
    base = await listen(t);
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const list: Competition[] = [];
    for (const sport of ['soccer', 'basketball']) {
      const res = await t.app.inject({ url: `/v1/competitions?sport=${sport}&status=scheduled&limit=1000`, headers: auth(admin) });
      list.push(...(res.json().data as Competition[]).filter((c) => c.date >= today));
    }
    // Today's first, so the ones reports and plays use are on game day.
    pool = list.sort((a, b) => (a.date === today ? 0 : 1) - (b.date === today ? 0 : 1));
  });
  afterAll(async () => {
    await t.services.webhooks.dispatcher.stop();
    await t.close();
  });

  const take = (): Competition => {
    const c = pool.shift();
    if (!c) throw new Error('no scheduled competition left');
    return c;
  };
  const gameOf = (c: Competition) => `${c.sport}_${c.id.split('_').pop()}`;
  const post = (url: string, body: unknown, key: string | null = source, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { ...(key ? auth(key) : {}), 'content-type': 'application/json', ...headers } });
  const move = (c: Competition, body: unknown, key: string | null = source, headers: Record<string, string> = {}) => post(`/v1/competitions/${c.id}/status`, body, key, headers);
  const count = async (table: 'events' | 'changes' | 'webhook_deliveries') =>
    Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const bodyFor = (to: CompetitionStatus) => (to === 'scheduled' ? { status: to, start_time: new Date(clock.now() + 3 * 86_400_000).toISOString() } : { status: to });

  it('allows every listed transition and refuses every other with 409 invalid_transition', async () => {
    for (const from of COMPETITION_STATUSES) {
      for (const to of COMPETITION_STATUSES) {
        const c = take();
        for (const step of PATH[from]) expect((await move(c, { status: step })).statusCode, `${c.id} to ${step}`).toBe(200);
        const events = await count('events');
        // The same status again, as it was asked before (a start that moves is a change: see below).
        const res = await move(c, from === to ? { status: to } : bodyFor(to));
        if (from === to) {
          // The same status again: 200, nothing changes, nothing is emitted.
          expect(res.statusCode).toBe(200);
          expect(res.json().data.status).toBe(from);
          expect(await count('events')).toBe(events);
        } else if (TRANSITIONS[from].includes(to)) {
          expect(res.statusCode, `${from} → ${to}: ${res.body}`).toBe(200);
          expect(res.json().data.status).toBe(to);
          expect(await count('events')).toBe(events + 1);
        } else {
          expectError(res, 409, 'conflict', { code: 'invalid_transition' });
          expect(await count('events')).toBe(events);
          const now = (await t.app.inject({ url: `/v1/competitions/${c.id}`, headers: auth(admin) })).json().data;
          expect(now.status).toBe(from);
        }
      }
    }
  });

  it('postpones and reschedules: original_start_time, status_reason, the game day moves; reports and plays are refused meanwhile', async () => {
    const c = take();
    const postponed = await move(c, { status: 'postponed', reason: 'Heavy rain' });
    expect(postponed.statusCode).toBe(200);
    expect(postponed.json().data).toMatchObject({ id: c.id, status: 'postponed', status_reason: 'Heavy rain', start_time: c.start_time, original_start_time: null });
    const home = c.competitors[0];
    const report = await post('/v1/reports', { game_id: gameOf(c), team: home.entity_id.split(':').pop(), points: 1 }, reporter);
    expectError(report, 409, 'conflict', { code: 'game_not_live', param: 'game_id' });
    const play = await post(`/v1/competitions/${c.id}/plays`, { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: home.entity_id, event_type: 'goal', points: 1 });
    expectError(play, 409, 'conflict', { code: 'invalid_transition' });
    expectError(await move(c, { status: 'scheduled' }), 400, 'invalid_request', { code: 'missing_field', param: 'start_time' });
    const when = new Date(clock.now() + 2 * 86_400_000).toISOString();
    const again = await move(c, { status: 'scheduled', start_time: when });
    expect(again.json().data).toMatchObject({ status: 'scheduled', start_time: when, original_start_time: c.start_time, status_reason: null, date: when.slice(0, 10) });
    const game = (await t.app.inject({ url: `/v1/games/${gameOf(c)}`, headers: auth(admin) })).json().data;
    expect(game).toMatchObject({ status: 'scheduled', original_start_time: c.start_time, date: when.slice(0, 10) });
  });

  it('the same status with a new start moves the start (one status event, the reason kept); the same request again changes nothing', async () => {
    const c = take();
    expect((await move(c, { status: 'postponed', reason: 'Heavy rain' })).statusCode).toBe(200);
    const events = await count('events');
    const first = new Date(clock.now() + 2 * 86_400_000).toISOString();
    const tentative = await move(c, { status: 'postponed', start_time: first });
    expect(tentative.statusCode).toBe(200);
    expect(tentative.json().data).toMatchObject({ status: 'postponed', start_time: first, original_start_time: c.start_time, status_reason: 'Heavy rain', date: first.slice(0, 10) });
    expect(await count('events')).toBe(events + 1);
    const game = (await t.app.inject({ url: `/v1/games/${gameOf(c)}/events?types=status`, headers: auth(admin) })).json().data as { status: string; previous_status: string; start_time: string; reason: string }[];
    expect(game[game.length - 1]).toMatchObject({ status: 'postponed', previous_status: 'postponed', start_time: first, reason: 'Heavy rain' });
    // Again with another date (and a reason of its own), then the very same request: a change, then none.
    const second = new Date(clock.now() + 4 * 86_400_000).toISOString();
    expect((await move(c, { status: 'postponed', start_time: second, reason: 'Pitch repairs' })).json().data).toMatchObject({ start_time: second, status_reason: 'Pitch repairs', original_start_time: c.start_time });
    expect(await count('events')).toBe(events + 2);
    expect((await move(c, { status: 'postponed', start_time: second, reason: 'Pitch repairs' })).json().data).toMatchObject({ start_time: second });
    expect((await move(c, { status: 'postponed' })).statusCode).toBe(200);
    expect(await count('events')).toBe(events + 2);
    // A scheduled game's kick-off moved the same way.
    const d = take();
    const kickOff = new Date(clock.now() + 3_600_000).toISOString();
    expect((await move(d, { status: 'scheduled', start_time: kickOff })).json().data).toMatchObject({ status: 'scheduled', start_time: kickOff, original_start_time: d.start_time });
  });

  it('refuses bad input with the documented body and stores nothing', async () => {
    const c = take();
    const before = [await count('events'), await count('changes')];
    expectError(await move(c, { status: 'delayed' }), 400, 'invalid_request', { param: 'status' });
    expectError(await move(c, {}), 400, 'invalid_request', { param: 'status' });
    expectError(await move(c, { status: 'postponed', extra: 1 }), 400, 'invalid_request');
    expectError(await move(c, { status: 'postponed', start_time: 'tomorrow' }), 400, 'invalid_request', { param: 'start_time' });
    expectError(await move(c, { status: 'live', start_time: new Date().toISOString() }), 400, 'invalid_request', { param: 'start_time' });
    expectError(await move(c, { status: 'postponed', reason: 'x'.repeat(501) }), 400, 'invalid_request', { param: 'reason' });
    expectError(await post('/v1/competitions/soccer_wc_999999999/status', { status: 'postponed' }), 404, 'not_found');
    expect([await count('events'), await count('changes')]).toEqual(before);
    expect((await t.app.inject({ url: `/v1/competitions/${c.id}`, headers: auth(admin) })).json().data.status).toBe('scheduled');
  });

  it('takes a start time within a day before now and five years ahead: year 0000 or 9999 is a 400 naming start_time, nothing stored', async () => {
    const c = take();
    expect((await move(c, { status: 'postponed' })).statusCode).toBe(200);
    const before = [await count('events'), await count('changes')];
    const day = 86_400_000;
    for (const start_time of ['0000-01-01T00:00:00Z', '1970-01-01T00:00:00Z', new Date(clock.now() - 2 * day).toISOString(), '9999-12-31T23:59:59Z', new Date(clock.now() + 6 * 365 * day).toISOString()]) {
      expectError(await move(c, { status: 'scheduled', start_time }), 400, 'invalid_request', { code: 'invalid_field', param: 'start_time' });
    }
    expect([await count('events'), await count('changes')]).toEqual(before);
    expect((await t.app.inject({ url: `/v1/competitions/${c.id}`, headers: auth(admin) })).json().data).toMatchObject({ status: 'postponed', date: c.date });
    // An announcement an hour late still lands.
    const late = new Date(clock.now() - 3_600_000).toISOString();
    expect((await move(c, { status: 'scheduled', start_time: late })).json().data).toMatchObject({ status: 'scheduled', start_time: late });
  });

  it('takes an official source only: wrong key, product and sport are refused', async () => {
    const c = take();
    const before = await count('events');
    expectError(await move(c, { status: 'postponed' }, null), 401, 'authentication_error', { code: 'missing_api_key' });
    expectError(await move(c, { status: 'postponed' }, 'svc_test_wrongwrongwrongwrongwrong1'), 401, 'authentication_error');
    expectError(await move(c, { status: 'postponed' }, reporter), 403, 'permission_error', { code: 'product_not_in_plan' });
    const otherSport = await t.key({ products: ['source'], sports: [c.sport === 'soccer' ? 'basketball' : 'soccer'] });
    expectError(await move(c, { status: 'postponed' }, otherSport), 403, 'permission_error', { code: 'sport_not_in_scope' });
    expect(await count('events')).toBe(before);
  });

  it('honours Idempotency-Key: the same key and body replays the first answer', async () => {
    const c = take();
    const first = await move(c, { status: 'postponed', reason: 'Pitch flooded' }, source, { 'idempotency-key': `k-${c.id}` });
    expect(first.statusCode).toBe(200);
    const events = await count('events');
    const replay = await move(c, { status: 'postponed', reason: 'Pitch flooded' }, source, { 'idempotency-key': `k-${c.id}` });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(await count('events')).toBe(events);
    expectError(await move(c, { status: 'cancelled' }, source, { 'idempotency-key': `k-${c.id}` }), 409, 'conflict', { code: 'idempotency_key_reused' });
  });

  describe('a postponement reaches every channel', () => {
    let c: Competition;
    let stream: StreamClient;
    let scoresOnly: StreamClient;
    let receiver: Receiver;
    let statusHook: { id: string; secret: string };
    let scoreHook: { id: string; secret: string };
    beforeAll(async () => {
      c = take();
      receiver = await startReceiver();
      const hook = async (path: string, types: unknown) => {
        const res = await post('/v1/webhooks', { url: `${receiver.url}${path}`, tier: 'confirmed', types }, admin);
        expect(res.statusCode, res.body).toBe(201);
        return res.json().data as { id: string; secret: string; types: string[] };
      };
      statusHook = await hook('/status/200', ['status']);
      expect((statusHook as { types?: string[] }).types).toEqual(['status']);
      scoreHook = await hook('/status/201', 'score');
      stream = await connect(`${base.ws}/v1/stream?game=${gameOf(c)}&types=status`, admin);
      scoresOnly = await connect(`${base.ws}/v1/stream?game=${gameOf(c)}&types=score`, admin);
      await stream.until((s) => s.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
      await scoresOnly.until((s) => s.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
      expect((await move(c, { status: 'postponed', reason: 'Storm warning' })).statusCode).toBe(200);
    });
    afterAll(async () => {
      stream.close();
      scoresOnly.close();
      await receiver.close();
    });

    const expected = () => ({ type: 'status', tier: 'confirmed', game_id: gameOf(c), sport: c.sport, status: 'postponed', previous_status: 'scheduled', start_time: c.start_time, reason: 'Storm warning', schema: 'svc.event.v1' });

    it('on the stream, with the types filter', async () => {
      await stream.until((s) => s.frames.some((f) => f.type === 'status'), 5000, 'status frame');
      const frame = stream.frames.find((f) => f.type === 'status');
      expect(frame).toMatchObject(expected());
      expect(Object.keys(frame ?? {}).sort()).toEqual(['game_id', 'id', 'previous_status', 'reason', 'schema', 'sport', 'start_time', 'status', 'tier', 'ts', 'type']);
      // A socket asking for scoring events only never sees it.
      await new Promise((r) => setTimeout(r, 200));
      expect(scoresOnly.frames.filter((f) => f.type === 'status')).toEqual([]);
    });

    it('to a signed webhook receiver whose endpoint wants status events, not to one that wants scores', async () => {
      await t.services.webhooks.dispatcher.runOnce();
      await receiver.waitFor((r) => r.requests.some((q) => q.path === '/status/200'), 5000, 'status webhook');
      const req = receiver.requests.find((q) => q.path === '/status/200');
      if (!req) throw new Error('no request');
      expect(JSON.parse(req.body)).toMatchObject(expected());
      expect(req.headers['x-svc-topic']).toBe('event.status');
      expect(verifySignature(String(req.headers['x-svc-signature']), req.body, statusHook.secret, { now: Math.floor(clock.now() / 1000) }).ok).toBe(true);
      expect(receiver.requests.filter((q) => q.path === '/status/201')).toEqual([]);
      const deliveries = (await t.app.inject({ url: `/v1/webhooks/${scoreHook.id}/deliveries`, headers: auth(admin) })).json().data;
      expect(deliveries).toEqual([]);
    });

    it("in the game's events, with the types filter", async () => {
      const all = (await t.app.inject({ url: `/v1/games/${gameOf(c)}/events`, headers: auth(admin) })).json().data;
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject(expected());
      const statusOnly = (await t.app.inject({ url: `/v1/games/${gameOf(c)}/events?types=status`, headers: auth(admin) })).json().data;
      expect(statusOnly).toEqual(all);
      const scores = (await t.app.inject({ url: `/v1/games/${gameOf(c)}/events?types=score,score_retracted`, headers: auth(admin) })).json().data;
      expect(scores).toEqual([]);
      expectError(await t.app.inject({ url: `/v1/games/${gameOf(c)}/events?types=goal`, headers: auth(admin) }), 400, 'invalid_request', { param: 'types' });
      expectError(await t.app.inject({ url: `/v1/stream?types=goal`, headers: auth(admin) }), 400, 'invalid_request');
    });

    it('in the change feed, as the event and the competition', async () => {
      const res = await t.app.inject({ url: '/v1/changes?limit=1000', headers: auth(admin) });
      expect(res.statusCode).toBe(200);
      let page = res.json();
      const all = [...page.data];
      while (page.data.length > 0) {
        page = (await t.app.inject({ url: `/v1/changes?limit=1000&since=${page.next_cursor}`, headers: auth(admin) })).json();
        all.push(...page.data);
      }
      const event = all.find((x: { type: string; object: { type?: string; game_id?: string } }) => x.type === 'event.created' && x.object.type === 'status' && x.object.game_id === gameOf(c));
      expect(event?.object).toMatchObject(expected());
      const competition = all.filter((x: { type: string; object_id: string }) => x.type === 'competition.updated' && x.object_id === c.id);
      expect(competition.length).toBeGreaterThan(0);
      expect(competition[competition.length - 1].object).toMatchObject({ id: c.id, status: 'postponed', status_reason: 'Storm warning' });
    });
  });

  it("goes into the export once the game is over, with the game's status history", async () => {
    const c = take();
    const home = c.competitors[0];
    for (const s of ['postponed']) expect((await move(c, { status: s })).statusCode).toBe(200);
    const when = new Date(clock.now()).toISOString();
    expect((await move(c, { status: 'scheduled', start_time: when })).statusCode).toBe(200);
    expect((await move(c, { status: 'live' })).statusCode).toBe(200);
    expect((await move(c, { status: 'suspended', reason: 'Floodlight failure' })).statusCode).toBe(200);
    // A play on a suspended game is taken and the game stays suspended.
    const play = await post(`/v1/competitions/${c.id}/plays`, { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: home.entity_id, event_type: 'free_kick', points: 0 });
    expect(play.statusCode, play.body).toBe(201);
    expect((await t.app.inject({ url: `/v1/competitions/${c.id}`, headers: auth(admin) })).json().data.status).toBe('suspended');
    expect((await move(c, { status: 'live' })).statusCode).toBe(200);
    expect((await move(c, { status: 'final' })).statusCode).toBe(200);
    clock.advance(2 * 86_400_000);
    const season = c.season_id;
    const res = await t.app.inject({ url: `/v1/export?league=${c.league}&season=${season}&types=status`, headers: auth(admin) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-changes-cursor']).toMatch(/^[A-Za-z0-9_-]+$/);
    const lines = res.body.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const mine = lines.filter((e: { game_id: string }) => e.game_id === gameOf(c));
    expect(mine.map((e: { status: string }) => e.status)).toEqual(['postponed', 'scheduled', 'live', 'suspended', 'live', 'final']);
    expect(lines.every((e: { type: string }) => e.type === 'status')).toBe(true);
    // The same lines as the game's events list.
    const rest = (await t.app.inject({ url: `/v1/games/${gameOf(c)}/events?types=status`, headers: auth(admin) })).json().data;
    expect(mine).toEqual(rest);
    clock.advance(-2 * 86_400_000);
  });
});
