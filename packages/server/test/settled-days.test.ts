import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { isoDate, ManualClock } from '../src/domain/clock.js';
import { CompetitionRepo } from '../src/store/reference/competitions.js';
import { SETTLE_AFTER_DAYS, SettledDays } from '../src/store/reference/settled-days.js';
import { expectError } from './contract.js';
import { auth, engines, testApp, testConfig, type TestApp } from './helpers.js';

const DAY_MS = 86_400_000;

/**
 * svc with its settled days against svc without them (SVC_SETTLED_DAYS_MB=0), on one database:
 * every answer must be the same bytes, and a kept day must be one that can no longer change.
 */
describe.each(engines())('settled days on %s', (engine) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let databasePath: BuiltApp;
  let admin: string;
  let dates: string[];

  beforeAll(async () => {
    t = await testApp({ engine, clock });
    databasePath = await buildApp({ config: testConfig(t.dataDir, { settledDaysBytes: 0 }), db: t.db, clock });
    await databasePath.app.ready();
    admin = await t.key();
    const rows = await t.db.kysely.selectFrom('competitions').select('date').distinct().orderBy('date').execute();
    dates = rows.map((r) => r.date);
  });
  afterAll(async () => {
    await databasePath.app.close();
    await t.close();
  });

  const both = async (url: string, key: string, node: BuiltApp = t) => {
    const [memory, database] = await Promise.all([
      node.app.inject({ url, headers: auth(key) }),
      databasePath.app.inject({ url, headers: auth(key) }),
    ]);
    // Errors carry their own request id; everything else must match byte for byte.
    const comparable = (body: string, status: number) => (status === 200 ? body : body.replace(/"request_id":"[^"]*"/, ''));
    expect({ url, status: memory.statusCode, body: comparable(memory.body, memory.statusCode) }).toEqual({
      url,
      status: database.statusCode,
      body: comparable(database.body, database.statusCode),
    });
    expect(memory.headers['content-type']).toBe(database.headers['content-type']);
    return memory;
  };
  const settledBefore = () => isoDate(clock.now() - (SETTLE_AFTER_DAYS - 1) * DAY_MS);
  const competitionsOn = (date: string) =>
    t.db.kysely.selectFrom('competitions').select(['id', 'sport', 'league', 'status', 'name']).where('date', '=', date).orderBy('id').execute();

  // Thousands of days through two paths: a fixed amount of work that a busy two-vCPU machine may take past 30 s for.
  it('answers every day of the archive with the bytes of the database path', { timeout: 120_000 }, async () => {
    for (const date of dates) await both(`/v1/competitions?date=${date}&limit=100`, admin);
    // The settled ones were answered from memory, and the gauge says how much it holds.
    expect(t.services.settledDays.size).toBeGreaterThan(0);
    const metrics = await t.app.inject({ url: '/metrics', headers: auth(admin) });
    expect(metrics.body).toContain(`\nsvc_settled_days_bytes ${t.services.settledDays.size}\n`);
    expect(dates.some((d) => d < settledBefore()) && dates.some((d) => d >= settledBefore())).toBe(true);
  });

  // A fixed amount of work too (four keys over a sample of days, through both paths): 4.6 s alone on
  // PostgreSQL, past 30 s in a loaded CI run.
  it('applies scope, filters and cursors as the database path does', { timeout: 120_000 }, async () => {
    const soccer = await t.key({ sports: ['soccer'] });
    const worldCup = await t.key({ leagues: ['wc'] });
    const basketball = await t.key({ sports: ['basketball'] });
    const busy = await t.db.kysely
      .selectFrom('competitions')
      .select(['date', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.count<number>('sport').distinct().as('sports')])
      .where('date', '<', settledBefore())
      .groupBy('date')
      .orderBy('n', 'desc')
      .limit(40)
      .execute();
    const mixed = busy.filter((r) => Number(r.sports) > 1).map((r) => r.date);
    const sample = [...new Set([...busy.map((r) => r.date), ...dates.filter((_, i) => i % 97 === 0)])];
    for (const date of sample) {
      for (const key of [admin, soccer, worldCup, basketball]) {
        await both(`/v1/competitions?date=${date}`, key);
        await both(`/v1/competitions?date=${date}&status=final`, key);
        await both(`/v1/competitions?date=${date}&status=live`, key);
      }
      await both(`/v1/competitions?date=${date}&league=wc`, admin);
      await both(`/v1/competitions?date=${date}&sport=soccer&limit=3`, admin);
      // Page by page with two a page; each cursor is taken to the other path too.
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/v1/competitions?date=${date}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        cursor = (await both(url, admin)).json().next_cursor;
        pages++;
      } while (cursor !== null);
      expect(pages).toBeGreaterThan(0);
    }
    // The scope really narrowed something: a day holding several sports, seen by one of them.
    if (mixed.length > 0) {
      const all = (await both(`/v1/competitions?date=${mixed[0]}`, admin)).json().data as { sport: string }[];
      const some = (await both(`/v1/competitions?date=${mixed[0]}`, basketball)).json().data as { sport: string }[];
      expect(some.length).toBeLessThan(all.length);
      expect(some.every((c) => c.sport === 'basketball')).toBe(true);
    }
  });

  it('refuses what the database path refuses: a bad cursor, no key, a wrong key, a sport or league out of scope', async () => {
    const date = dates.find((d) => d < settledBefore()) ?? '';
    const other = dates.find((d) => d < date) ?? dates[0];
    const cursorOfOther = (await both(`/v1/competitions?date=${other}&limit=1`, admin)).json().next_cursor;
    if (cursorOfOther) await both(`/v1/competitions?date=${date}&cursor=${cursorOfOther}`, admin);
    expectError(await both(`/v1/competitions?date=${date}&cursor=not-a-cursor`, admin), 400, 'invalid_request', { code: 'invalid_cursor' });
    expectError(await t.app.inject({ url: `/v1/competitions?date=${date}` }), 401, 'authentication_error');
    expectError(await t.app.inject({ url: `/v1/competitions?date=${date}`, headers: auth('svc_test_NotAKeyNotAKeyNotAKey00') }), 401, 'authentication_error');
    const tennis = await t.key({ sports: ['tennis'] });
    expectError(await both(`/v1/competitions?date=${date}&sport=soccer`, tennis), 403, 'permission_error', { code: 'sport_not_in_scope' });
    const basketballLeague = await t.key({ leagues: ['sbl'] });
    expectError(await both(`/v1/competitions?date=${date}&league=wc`, basketballLeague), 403, 'permission_error');
  });

  it('keeps a day only once it has settled: two days behind today and every competition final', async () => {
    // A node of its own, which has read no day yet.
    const node = await buildApp({ config: testConfig(t.dataDir), db: t.db, clock });
    try {
      await keepsOnlySettled(node);
    } finally {
      await node.app.close();
    }
  });

  const keepsOnlySettled = async (node: BuiltApp) => {
    // An edit made behind the service's back shows which path answered: memory does not see it.
    // Each probe asks a URL of its own (the limit), so the response cache cannot answer it.
    let probes = 0;
    const probe = async (date: string) => {
      const [first] = await competitionsOn(date);
      await t.db.kysely.updateTable('competitions').set({ name: `edited ${first.name ?? ''}` }).where('id', '=', first.id).execute();
      const url = `/v1/competitions?date=${date}&limit=${1000 - ++probes}`;
      const seen = (await node.app.inject({ url, headers: auth(admin) })).json().data as { id: string; name: string | null }[];
      await t.db.kysely.updateTable('competitions').set({ name: first.name }).where('id', '=', first.id).execute();
      return seen.find((c) => c.id === first.id)?.name?.startsWith('edited') ? 'database' : 'memory';
    };
    const days = [];
    for (const d of dates) {
      const cs = await competitionsOn(d);
      if (cs.length > 0 && cs.every((c) => c.status === 'final') && d < settledBefore()) days.push(d);
      if (days.length === 2) break;
    }
    const [day, later] = days;
    const saved = clock.now();
    try {
      // The day before yesterday is settled; yesterday is not.
      clock.set(Date.parse(`${day}T12:00:00Z`) + (SETTLE_AFTER_DAYS - 1) * DAY_MS);
      expect(await probe(day)).toBe('database');
      clock.advance(DAY_MS);
      await node.app.inject({ url: `/v1/competitions?date=${day}`, headers: auth(admin) });
      expect(await probe(day)).toBe('memory');
    } finally {
      clock.set(saved);
    }

    // A game of a past day that never finished keeps the day in the database until it is final.
    const [stuck] = await competitionsOn(later);
    await t.db.kysely.updateTable('competitions').set({ status: 'live' }).where('id', '=', stuck.id).execute();
    expect((await both(`/v1/competitions?date=${later}`, admin, node)).json().data.find((c: { id: string }) => c.id === stuck.id).status).toBe('live');
    expect(await probe(later)).toBe('database');
    const source = await t.key({ products: ['source'] });
    const [home] = await t.db.kysely.selectFrom('competitors').select('entity_id').where('competition_id', '=', stuck.id).orderBy('idx').execute();
    const final = await t.app.inject({
      method: 'POST',
      url: `/v1/competitions/${stuck.id}/plays`,
      headers: { ...auth(source), 'content-type': 'application/json' },
      payload: JSON.stringify({ period: { unit: 'fulltime', num: 1, label: 'Full time' }, competitor_id: home.entity_id, event_type: 'final', points: 0 }),
    });
    expect(final.statusCode, final.body).toBe(201);
    // Looked at again only after a minute; meanwhile the database answers, and it says final.
    expect((await both(`/v1/competitions?date=${later}`, admin, node)).json().data.find((c: { id: string }) => c.id === stuck.id).status).toBe('final');
    expect(await probe(later)).toBe('database');
    clock.advance(61_000);
    await node.app.inject({ url: `/v1/competitions?date=${later}`, headers: auth(admin) });
    expect(await probe(later)).toBe('memory');
    // And nothing can change it any more.
    const after = await t.app.inject({
      method: 'POST',
      url: `/v1/competitions/${stuck.id}/plays`,
      headers: { ...auth(source), 'content-type': 'application/json' },
      payload: JSON.stringify({ period: { unit: 'half', num: 2, label: '2nd half' }, competitor_id: home.entity_id, event_type: 'goal', points: 1 }),
    });
    expectError(after, 409, 'conflict', { code: 'competition_final' });
    await both(`/v1/competitions?date=${later}`, admin, node);
  };

  it('stays within its memory budget, dropping the least recently read days, and answers the same', async () => {
    const budget = 16 * 1024;
    const small = new SettledDays(new CompetitionRepo(t.db), clock, () => isoDate(clock.now()), budget);
    const scope = { sports: null, leagues: null, viewerKeyId: null };
    const settled = dates.filter((d) => d < settledBefore()).slice(0, 300);
    const [kept, dropped] = settled;
    const first = await small.page(scope, { date: kept }, { limit: 100 });
    for (const date of settled) {
      const body = await small.page(scope, { date }, { limit: 100 });
      const database = await databasePath.app.inject({ url: `/v1/competitions?date=${date}&limit=100`, headers: auth(admin) });
      expect(body).toBe(database.body);
      expect(small.size).toBeLessThanOrEqual(budget);
      // The first day is read on every round; the second only once.
      await small.page(scope, { date: kept }, { limit: 100 });
    }
    expect(small.size).toBeGreaterThan(budget / 4);
    // Edited behind its back: the day read all along is still held, the other was dropped and is read again.
    const [a] = await competitionsOn(kept);
    const [b] = await competitionsOn(dropped);
    try {
      await t.db.kysely.updateTable('competitions').set({ name: 'edited' }).where('id', 'in', [a.id, b.id]).execute();
      expect(await small.page(scope, { date: kept }, { limit: 100 })).toBe(first);
      expect(await small.page(scope, { date: dropped }, { limit: 100 })).toContain('"name":"edited"');
    } finally {
      await t.db.kysely.updateTable('competitions').set({ name: a.name }).where('id', '=', a.id).execute();
      await t.db.kysely.updateTable('competitions').set({ name: b.name }).where('id', '=', b.id).execute();
    }
    const off = new SettledDays(new CompetitionRepo(t.db), clock, () => isoDate(clock.now()), 0);
    expect(await off.page(scope, { date: settled[0] }, { limit: 100 })).toBeUndefined();
  });
});

describe('SVC_SETTLED_DAYS_MB', () => {
  it('is a whole number of MiB, 64 by default, 0 to turn the settled days off, refused in one line otherwise', () => {
    expect(loadConfig({}).settledDaysBytes).toBe(64 * 1_048_576);
    expect(loadConfig({ SVC_SETTLED_DAYS_MB: '0' }).settledDaysBytes).toBe(0);
    expect(() => loadConfig({ SVC_SETTLED_DAYS_MB: '-1' })).toThrow(/^SVC_SETTLED_DAYS_MB must be an integer between 0 and 65536, got '-1'$/);
    expect(() => loadConfig({ SVC_SETTLED_DAYS_MB: 'lots' })).toThrow(/SVC_SETTLED_DAYS_MB/);
  });
});
