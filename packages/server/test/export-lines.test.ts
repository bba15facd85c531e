import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEventRow } from '../src/store/events/json.js';
import { auth, engines, testApp, type TestApp } from './helpers.js';
import { rawDataItems } from './raw-json.js';

/**
 * The database writes most of an export line (store/events/lines.ts): its JSON must be the REST
 * serializer's for every value it may hold, not only the tidy ones of the archive.
 */
describe.each(engines())('export lines against the REST serializer, odd values included (%s)', (engine) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key({ products: ['archive', 'live'] });
  });
  afterAll(async () => t.close());
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: auth(key) });

  /** Each raw item of GET /v1/games/:id/events, all pages. */
  async function restEvents(gameId: string): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/v1/games/${gameId}/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      out.push(...rawDataItems(res.body));
      cursor = res.json().next_cursor;
    } while (cursor);
    return out;
  }

  /** The export lines of one game of wc 2022, read from the database (an `after` is never served from the cache). */
  async function exportedEvents(gameId: string): Promise<string[]> {
    const res = await get('/v1/export?league=wc&season=2022&after=evt_000000000001');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['x-svc-export-cache']).toBeUndefined();
    return res.body
      .slice(0, -1)
      .split('\n')
      .filter((l) => (JSON.parse(l) as { game_id: string }).game_id === gameId);
  }

  // PostgreSQL text cannot hold U+0000; lone surrogates are stored as U+FFFD by both drivers,
  // and both paths then read the same stored text.
  const odd = fc.constantFrom('"', '\\', '\n', '\r', '\t', '\b', '\f', '\u0001', '\u001f', '\u007f', '\u2028', '\u2029', '\ud800', '\udfff', 'é', '😀', '</script>', "'", '%s', '?', '$1');
  const text = fc
    .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), odd), { maxLength: 4 })
    .map((parts) => parts.join(''))
    .map((s) => (engine === 'postgres' ? s.replaceAll('\u0000', '') : s));
  const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
  const agreement = fc.oneof(
    fc.double({ noNaN: true }),
    fc.constantFrom(0, -0, 1, 0.5, 2 / 3, 1 / 3, 0.1 + 0.2, 1e-5, 1e-7, 1e15, 1e21, 5e-324, Number.MAX_VALUE, Infinity, -Infinity),
  );
  const event = fc.record({
    type: fc.oneof(fc.constantFrom('score', 'score_retracted'), text),
    sport: text,
    league: text,
    team: text,
    event_type: text,
    points: int32,
    clock: fc.option(text),
    ts: text,
    agreement,
    reporters: int32,
    latency_ms: int32,
    probability: fc.double({ min: 0, max: 1, noNaN: true }),
    provisional_id: fc.option(text),
    retracted_id: fc.option(text),
  });

  it('every line is the raw item of GET /v1/games/:id/events, byte for byte', async () => {
    const game = await t.db.kysely
      .selectFrom('events')
      .select(['game_id', 'competition_id', 'season_id'])
      .where('season_id', '=', 'wc_2022')
      .where('tier', '=', 'confirmed')
      .limit(1)
      .executeTakeFirstOrThrow();
    const at = { game_id: game.game_id, competition_id: game.competition_id, season_id: game.season_id };
    // An id past the 12 padded digits (before any REST read: the response cache only learns of appends).
    await t.db.kysely
      .insertInto('events')
      .values({ seq: 1_234_567_890_123, ...storedEventRow({ ...at, type: 'score', tier: 'confirmed', sport: 's', league: 'l', team: 't', event_type: 'e', points: 1, clock: null, ts: 'x', agreement: 1, reporters: 1, latency_ms: 1, probability: 1, provisional_id: null, retracted_id: null }) })
      .execute();
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 10 }), async (events) => {
        // Through the event log, so the REST response cache learns of the append.
        await t.services.events.append(events.map((e) => ({ ...e, ...at, tier: 'confirmed' })));
        expect(await exportedEvents(at.game_id)).toEqual(await restEvents(at.game_id));
      }),
      { numRuns: 40 },
    );
    const lines = await exportedEvents(at.game_id);
    expect(lines.filter((l) => l.includes('"id":"evt_1234567890123"'))).toHaveLength(1);
  }, 120_000);
});
