import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateInZone, startOfDay, zoneDay } from '../src/domain/zones.js';
import { auth, engines, ManualClock, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';

/**
 * `tz` on the date filters (docs/decisions.md "Time zones"): the day is the zone's, matched on
 * `start_time`. Games are placed around midnight in New York on the day its clocks spring forward
 * (2031-03-09, 02:00 EST → 03:00 EDT: a day of 23 hours), so the zone's offset differs at the
 * day's two ends.
 */
const GAMES: { key: string; start: string | null; date: string }[] = [
  { key: 'a', start: '2031-03-09T04:59:59.999Z', date: '2031-03-09' }, // 23:59:59.999 on the 8th, EST
  { key: 'b', start: '2031-03-09T05:00:00.000Z', date: '2031-03-09' }, // 00:00 on the 9th, EST
  { key: 'c', start: '2031-03-10T03:59:59.999Z', date: '2031-03-10' }, // 23:59:59.999 on the 9th, EDT
  { key: 'd', start: '2031-03-10T04:00:00.000Z', date: '2031-03-10' }, // 00:00 on the 10th, EDT
  { key: 'e', start: null, date: '2031-03-09' }, // no start time: matched on its date
];

describe('zones (domain/zones.ts) against the tz database', () => {
  it('a day spans its wall-clock midnights, 23 or 25 hours long across a DST change', () => {
    expect(zoneDay('2031-03-09', 'America/New_York', 0)).toEqual({ date: '2031-03-09', from: '2031-03-09T05:00:00.000Z', to: '2031-03-10T04:00:00.000Z' });
    expect(zoneDay('2031-11-02', 'America/New_York', 0)).toEqual({ date: '2031-11-02', from: '2031-11-02T04:00:00.000Z', to: '2031-11-03T05:00:00.000Z' });
    expect(zoneDay('2031-10-26', 'Europe/London', 0)).toEqual({ date: '2031-10-26', from: '2031-10-25T23:00:00.000Z', to: '2031-10-27T00:00:00.000Z' });
    expect(zoneDay('2031-03-09', 'Asia/Kolkata', 0)).toEqual({ date: '2031-03-09', from: '2031-03-08T18:30:00.000Z', to: '2031-03-09T18:30:00.000Z' });
    expect(zoneDay('2031-03-09', 'UTC', 0)).toEqual({ date: '2031-03-09', from: '2031-03-09T00:00:00.000Z', to: '2031-03-10T00:00:00.000Z' });
  });

  it('where a DST change skips midnight, the day starts at the first instant after the jump', () => {
    // Chile sprang forward at 24:00 on 2022-09-10: 00:00 on the 11th never happened, 01:00 -03 did.
    const start = startOfDay('America/Santiago', '2022-09-11');
    expect(new Date(start).toISOString()).toBe('2022-09-11T04:00:00.000Z');
    expect(dateInZone('America/Santiago', start - 1)).toBe('2022-09-10');
    expect(dateInZone('America/Santiago', start)).toBe('2022-09-11');
  });

  it('today is the zone\'s date: 21:30 in New York is still the 9th there', () => {
    const at = Date.parse('2031-03-10T01:30:00.000Z');
    expect(zoneDay('today', 'America/New_York', at).date).toBe('2031-03-09');
    expect(zoneDay('today', 'Asia/Tokyo', at).date).toBe('2031-03-10');
  });
});

describe.each(engines())('date with tz on /v1/games and /v1/competitions on %s', (engine) => {
  let t: TestApp;
  let key: string;
  const clock = new ManualClock(Date.parse('2031-03-10T01:30:00.000Z'));
  const ids = new Map<string, string>();
  beforeAll(async () => {
    t = await testApp({ engine, clock });
    key = await t.key({ products: ['archive'] });
    const template = await t.db.kysely.selectFrom('competitions').selectAll().where('sport', '=', 'basketball').orderBy('n', 'desc').limit(1).executeTakeFirstOrThrow();
    const competitors = await t.db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', template.id).execute();
    let n = template.n;
    for (const g of GAMES) {
      n += 1;
      const id = `basketball_${template.league}_${n}`;
      ids.set(String(n), g.key);
      await t.db.kysely.insertInto('competitions').values({ ...template, id, n, date: g.date, start_time: g.start, status: 'scheduled', source_key: null }).execute();
      await t.db.kysely.insertInto('competitors').values(competitors.map((c) => ({ ...c, competition_id: id, score: 0 }))).execute();
    }
  });
  afterAll(async () => t.close());

  /** The keys of the placed games a list returns (every page), in the list's order. */
  async function listed(path: string, query: string): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/${path}?${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await t.app.inject({ method: 'GET', url, headers: auth(key) });
      expect(res.statusCode, res.body).toBe(200);
      const body: { data: { id: string }[]; next_cursor: string | null } = res.json();
      for (const r of body.data) {
        // A game `basketball_<n>` is competition `basketball_<league>_<n>`: the number tells them apart.
        const k = r.id.startsWith('basketball_') ? ids.get(r.id.split('_').pop() ?? '') : undefined;
        if (k) out.push(k);
      }
      cursor = body.next_cursor;
    } while (cursor);
    return out.sort();
  }

  for (const path of ['games', 'competitions']) {
    it(`${path}: the 9th in New York is b, c and the game without a start time; the 8th ends at a, the 10th starts at d`, async () => {
      expect(await listed(path, 'sport=basketball&date=2031-03-09&tz=America/New_York')).toEqual(['b', 'c', 'e']);
      expect(await listed(path, 'sport=basketball&date=2031-03-08&tz=America/New_York')).toEqual(['a']);
      expect(await listed(path, 'sport=basketball&date=2031-03-10&tz=America/New_York')).toEqual(['d']);
      // Tokyo (+09:00) puts a and b on the 9th, c and d on the 10th.
      expect(await listed(path, 'sport=basketball&date=2031-03-09&tz=Asia/Tokyo')).toEqual(['a', 'b', 'e']);
      expect(await listed(path, 'sport=basketball&date=2031-03-10&tz=Asia/Tokyo')).toEqual(['c', 'd']);
    });

    it(`${path}: without tz the date is the competition's UTC date, as before; tz alone changes nothing`, async () => {
      expect(await listed(path, 'sport=basketball&date=2031-03-09')).toEqual(['a', 'b', 'e']);
      expect(await listed(path, 'sport=basketball&date=2031-03-10')).toEqual(['c', 'd']);
      expect(await listed(path, 'sport=basketball&tz=America/New_York')).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it(`${path}: date=today at 21:30 in New York (already the 10th in UTC) is the 9th there`, async () => {
      expect(await listed(path, 'sport=basketball&date=today&tz=America/New_York')).toEqual(['b', 'c', 'e']);
      expect(await listed(path, 'sport=basketball&date=today')).toEqual(['c', 'd']);
    });

    it(`${path}: an unknown zone is a 400 invalid_parameter naming tz`, async () => {
      for (const tz of ['Mars/Olympus_Mons', 'America/New%20York', '..%2F..%2Fetc%2Fpasswd', 'EST5EDT%3B', 'x'.repeat(65), '']) {
        const res = await t.app.inject({ method: 'GET', url: `/v1/${path}?date=2031-03-09&tz=${tz}`, headers: auth(key) });
        expectError(res, 400, 'invalid_request', { code: 'invalid_parameter', param: 'tz' });
      }
      // Checked even without a date, so a typo is never silently ignored.
      const res = await t.app.inject({ method: 'GET', url: `/v1/${path}?tz=Europe/Lndon`, headers: auth(key) });
      expectError(res, 400, 'invalid_request', { code: 'invalid_parameter', param: 'tz' });
    });
  }
});
