import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, isoTime } from '../src/domain/clock.js';
import { REPORT_TTL_MS, StatusService } from '../src/status/service.js';
import { DAY_MS, MINUTE_MS, dayUptime, feedState, webhooksFailing } from '../src/domain/status.js';
import { auth, engines, testApp, type TestApp } from './helpers.js';

type Json = Record<string, unknown>;
interface Sport {
  sport: string;
  status: string;
  uptime_90d: number | null;
  days: { date: string; uptime: number | null }[];
}
interface Incident {
  id: string;
  sport?: string;
  channel?: string;
  title: string;
  started_at: string;
  resolved_at: string | null;
}

describe('status rules', () => {
  const t0 = Date.parse('2026-06-11T10:00:00Z');
  it('a live sport is down after 5 minutes without an event, counted from when it went live', () => {
    expect(feedState({ liveGames: 0, lastEventAt: null, liveSince: null, now: t0 })).toEqual({ status: 'idle', degradedSince: null });
    expect(feedState({ liveGames: 1, lastEventAt: null, liveSince: t0, now: t0 + 4 * MINUTE_MS }).status).toBe('operational');
    expect(feedState({ liveGames: 1, lastEventAt: null, liveSince: t0, now: t0 + 5 * MINUTE_MS })).toEqual({ status: 'degraded', degradedSince: t0 + 5 * MINUTE_MS });
    expect(feedState({ liveGames: 2, lastEventAt: t0 + MINUTE_MS, liveSince: t0, now: t0 + 5 * MINUTE_MS }).status).toBe('operational');
  });
  it('counts a minute without a sample as down, and the current minute once sampled', () => {
    const day = Date.parse('2026-06-11T00:00:00Z');
    // Monitoring started at 10:00; 10:00..10:09 sampled except one minute; now 10:09:30 with 10:09 in.
    const tally = { day, sampled: 9, up: 9, lastMinute: day + 10 * 3_600_000 + 9 * MINUTE_MS };
    expect(dayUptime(tally, day, t0, t0 + 9.5 * MINUTE_MS)).toEqual({ expected: 10, up: 9, uptime: 0.9 });
    // 10:10:05, the 10:10 sample not yet taken: not held against the day.
    expect(dayUptime(tally, day, t0, t0 + 10 * MINUTE_MS + 5000).expected).toBe(10);
    // A past day counts to its end; a day without samples has no figure.
    expect(dayUptime(tally, day, t0, t0 + DAY_MS).expected).toBe(14 * 60);
    expect(dayUptime(undefined, day, t0, t0).uptime).toBeNull();
  });
  it('webhooks fail above half of at least 10 recent attempts', () => {
    expect(webhooksFailing(9, 9)).toBe(false);
    expect(webhooksFailing(10, 5)).toBe(false);
    expect(webhooksFailing(10, 6)).toBe(true);
  });
});

describe.each(engines())('status history (%s)', (engine) => {
  let t: TestApp;
  let clock: ManualClock;
  let key: string;
  let game: { id: string; team: string; date: string };
  const D = (hhmm: string, day = 0) => Date.parse(`${game.date}T${hhmm}:00.000Z`) + day * DAY_MS;

  beforeAll(async () => {
    clock = new ManualClock();
    t = await testApp({ engine, clock });
    const row = await t.db.kysely
      .selectFrom('competitions')
      .select(['n', 'date'])
      .where('sport', '=', 'basketball')
      .where('status', '=', 'scheduled')
      .orderBy('date')
      .limit(1)
      .executeTakeFirstOrThrow();
    const gameId = `basketball_${row.n}`;
    clock.set(Date.parse(`${row.date}T23:50:00.000Z`));
    key = await t.key();
    const g = (await t.app.inject({ url: `/v1/games/${gameId}`, headers: auth(key) })).json().data;
    game = { id: gameId, team: String(g.competitors[0].entity_id).split(':').pop() ?? '', date: row.date };
  });
  afterAll(async () => t.close());

  const status = async () => {
    const res = await t.app.inject({ url: '/v1/status' });
    expect(res.statusCode).toBe(200);
    return res.json().data as { status: string; sports: Sport[]; channels: Json[]; incidents: Incident[] };
  };
  const score = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: { ...auth(key), 'content-type': 'application/json' }, payload: JSON.stringify({ game_id: game.id, team: game.team, points: 2 }) });
    expect(res.statusCode, res.body).toBe(202);
  };
  const minute = async (n = 1) => {
    for (let i = 0; i < n; i++) {
      clock.advance(MINUTE_MS);
      expect(await t.services.status.sample()).toBe(true);
    }
  };

  it('records a sample a minute, opens an incident for a silent live sport and resolves it, and draws 90 days of uptime', async () => {
    expect(await t.services.status.sample()).toBe(true); // 23:50, nothing live
    expect(await t.services.status.sample()).toBe(false); // the same minute again
    const first = await status();
    expect(first.sports.every((s) => s.status === 'idle')).toBe(true);
    expect(first.channels).toEqual([
      { channel: 'rest', status: 'operational' },
      { channel: 'stream', status: 'operational' },
      { channel: 'webhooks', status: 'operational' },
    ]);

    clock.set(D('23:51'));
    await score(); // the game goes live with a provisional event at 23:51
    expect(await t.services.status.sample()).toBe(true);
    await minute(4); // 23:55: 4 minutes of silence, still up
    expect((await status()).sports.find((s) => s.sport === 'basketball')?.status).toBe('operational');
    await minute(2); // 23:56 and 23:57: down
    const down = await status();
    expect(down.status).toBe('degraded');
    expect(down.sports.find((s) => s.sport === 'basketball')?.status).toBe('degraded');
    const open = down.incidents.filter((i) => i.resolved_at === null);
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ sport: 'basketball', started_at: new Date(D('23:56')).toISOString(), resolved_at: null });
    expect(open[0]).not.toHaveProperty('channel');
    expect(open[0].title).toMatch(/Basketball: no events for 5 minutes/);
    expect(open[0].id).toMatch(/^inc_/);

    clock.set(D('23:58'));
    await score();
    expect(await t.services.status.sample()).toBe(true);
    const back = await status();
    expect(back.sports.find((s) => s.sport === 'basketball')?.status).toBe('operational');
    expect(back.incidents[0]).toMatchObject({ id: open[0].id, resolved_at: new Date(D('23:58')).toISOString() });

    await minute(4); // 23:59, 00:00, 00:01, 00:02 of the next day
    // Another node sampling the same minute changes nothing.
    const otherNode = new StatusService({ db: t.db, clock, health: t.services.health, redis: null });
    expect(await otherNode.sample()).toBe(true);

    const s = await status();
    const bb = s.sports.find((x) => x.sport === 'basketball');
    const soccer = s.sports.find((x) => x.sport === 'soccer');
    expect(bb?.days).toHaveLength(90);
    const dayAfter = new Date(D('00:00', 1)).toISOString().slice(0, 10);
    expect(bb?.days.at(-1)).toEqual({ date: dayAfter, uptime: 1 });
    // 23:50..23:59 monitored, 23:56 and 23:57 down.
    expect(bb?.days.at(-2)).toEqual({ date: game.date, uptime: 0.8 });
    expect(bb?.days.slice(0, -2).every((d) => d.uptime === null)).toBe(true);
    expect(soccer?.days.at(-2)?.uptime).toBe(1);
    expect(bb?.uptime_90d).toBeCloseTo(11 / 13, 6);

    // svc not sampling from 00:03 to 00:09 (stopped): those minutes count as down.
    clock.set(D('00:10', 1));
    expect(await t.services.status.sample()).toBe(true);
    const gap = await status();
    expect(gap.sports.find((x) => x.sport === 'soccer')?.days.at(-1)?.uptime).toBeCloseTo(4 / 11, 6);
    const rows = await t.db.kysely.selectFrom('status_samples').select((eb) => eb.fn.countAll<number>().as('n')).where('sport', '=', 'soccer').executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(14);
  });

  it('opens a webhooks incident when more than half of at least 10 recent attempts fail, and resolves it when that passes', async () => {
    const at = new Date(clock.now() - 30_000).toISOString();
    await t.db.kysely
      .insertInto('webhook_attempts')
      .values(Array.from({ length: 10 }, (_, i) => ({ delivery_id: `dlv_status_${i}`, attempt: 1, endpoint_id: 'we_x', at, status_code: i < 6 ? 500 : 200, duration_ms: 3, error: i < 6 ? 'HTTP 500' : null, response_excerpt: null })))
      .execute();
    await minute();
    const failing = await status();
    expect(failing.channels.find((c) => c.channel === 'webhooks')).toEqual({ channel: 'webhooks', status: 'degraded' });
    const incident = failing.incidents.find((i) => i.channel === 'webhooks');
    expect(incident).toMatchObject({ channel: 'webhooks', resolved_at: null });
    expect(incident).not.toHaveProperty('sport');
    await minute(6);
    const after = await status();
    expect(after.channels.find((c) => c.channel === 'webhooks')?.status).toBe('operational');
    // Resolved by the first sample whose 5-minute window no longer holds the failures.
    const resolvedAt = after.incidents.find((i) => i.id === incident?.id)?.resolved_at;
    expect(resolvedAt).toBe(new Date(Date.parse(at) + 5 * MINUTE_MS + 30_000).toISOString());
  });

  it('keeps minute samples 91 days and the daily figures after that', async () => {
    const before = await t.db.kysely.selectFrom('status_days').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    clock.advance(92 * DAY_MS);
    const fresh = new StatusService({ db: t.db, clock, health: t.services.health, redis: null });
    expect(await fresh.sample()).toBe(true);
    const samples = await t.db.kysely.selectFrom('status_samples').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(samples.n)).toBe(5);
    const after = await t.db.kysely.selectFrom('status_days').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n) + 5);
    // The old days fell out of the 90-day window: today is the only day with a figure.
    const s = await status();
    expect(s.sports[0].days.filter((d) => d.uptime !== null)).toHaveLength(1);
  });

  it('builds the public report at most once a second, shared by everyone asking, and afresh after an event or a sample', async () => {
    const generatedAt = async (url = '/v1/status') => {
      const res = await t.app.inject({ url });
      expect(res.statusCode).toBe(200);
      return url === '/v1/status' ? String(res.json().data.generated_at) : String(/"generated_at":"([^"]+)"/.exec(res.body)?.[1]);
    };
    const first = await generatedAt();
    clock.advance(REPORT_TTL_MS / 2);
    expect(await generatedAt()).toBe(first);
    expect(await generatedAt('/status')).toBe(first);
    const asked = await Promise.all(Array.from({ length: 20 }, () => generatedAt()));
    expect(new Set(asked)).toEqual(new Set([first]));
    clock.advance(REPORT_TTL_MS / 2);
    const second = await generatedAt();
    expect(second).toBe(isoTime(clock.now()));
    clock.advance(10);
    // What the event bus calls for every batch this node sees.
    t.services.status.eventsSeen();
    expect(await generatedAt()).toBe(isoTime(clock.now()));
    // A report built at the start of a minute, then that minute's sample 10 ms later.
    clock.set(Math.ceil(clock.now() / MINUTE_MS) * MINUTE_MS);
    const held = await generatedAt();
    clock.advance(10);
    expect(await generatedAt()).toBe(held);
    expect(await t.services.status.sample()).toBe(true);
    expect(await generatedAt()).toBe(isoTime(clock.now()));
  });
});
