import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLarge } from '../src/archive/large.js';
import { parseExportArgs, runExport, ExportUsageError } from '../src/cli/export.js';
import { auth, engines, listen, tmpDir, testApp, type TestApp } from './helpers.js';
import { expectError } from './contract.js';
import { rawDataItems } from './raw-json.js';

/** An NDJSON body as its lines, each checked to end with '\n'. */
function ndjson(body: string): string[] {
  if (body === '') return [];
  expect(body.endsWith('\n')).toBe(true);
  return body.slice(0, -1).split('\n');
}

const parse = <T>(line: string): T => JSON.parse(line);

describe.each(engines())('GET /v1/export on %s', (engine) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key({ products: ['archive'] });
  });
  afterAll(async () => t.close());
  /** The app on a real socket, started once for the tests that need one. */
  let listening: Promise<string> | undefined;
  const baseUrl = () => (listening ??= listen(t).then((a) => a.http));
  const get = (url: string, headers: Record<string, string> = auth(key)) => t.app.inject({ method: 'GET', url, headers });
  const exportLines = async (query: string) => {
    const res = await get(`/v1/export?${query}`);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    return ndjson(res.body);
  };

  /** Every item of a paginated REST list, as the raw text the server sent. */
  async function restItems(url: string, limit: number): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | null = null;
    do {
      const sep = url.includes('?') ? '&' : '?';
      const res = await get(`${url}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      out.push(...rawDataItems(res.body));
      cursor = res.json().next_cursor;
    } while (cursor);
    return out;
  }

  describe('each line is byte for byte the REST record', () => {
    it('competitions: the export is the concatenation of the paginated GET /v1/competitions', async () => {
      for (const [league, season] of [['wc', '2022'], ['sbl', '2026']]) {
        const lines = await exportLines(`league=${league}&season=${season}&entity=competitions`);
        const rest = await restItems(`/v1/competitions?league=${league}&season=${season}`, 7);
        expect(lines.length).toBeGreaterThan(50);
        expect(lines).toEqual(rest);
      }
    });

    it('plays: the export is the concatenation of GET /v1/competitions/:id/plays in competition order', async () => {
      for (const [league, season] of [['wc', '2022'], ['sbl', '2026']]) {
        const lines = await exportLines(`league=${league}&season=${season}&entity=plays`);
        const comps = (await restItems(`/v1/competitions?league=${league}&season=${season}`, 1000)).map((c) => parse<{ id: string; status: string }>(c));
        const rest: string[] = [];
        for (const c of comps) if (c.status === 'final') rest.push(...(await restItems(`/v1/competitions/${c.id}/plays`, 40)));
        expect(lines.length).toBeGreaterThan(200);
        expect(lines).toEqual(rest);
      }
    });

    it('events: every export line is the raw item of GET /v1/games/:id/events, all of them, in seq order', async () => {
      for (const [league, season] of [['wc', '2022'], ['sbl', '2026']]) {
        const lines = await exportLines(`league=${league}&season=${season}`);
        const games = (await restItems(`/v1/games?league=${league}&season=${season}`, 1000)).map((g) => parse<{ id: string; status: string }>(g));
        const rest: string[] = [];
        for (const g of games) if (g.status === 'final') rest.push(...(await restItems(`/v1/games/${g.id}/events`, 50)));
        const seq = (line: string) => Number(parse<{ id: string }>(line).id.slice(4));
        rest.sort((a, b) => seq(a) - seq(b));
        expect(lines.length).toBeGreaterThan(150);
        expect(lines).toEqual(rest);
        const seqs = lines.map(seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    });
  });

  it('sends NDJSON with a file name, and gzip that decodes to the same bytes', async () => {
    const plain = await get('/v1/export?league=wc&season=wc_2022');
    expect(plain.headers['content-type']).toBe('application/x-ndjson');
    expect(plain.headers['content-disposition']).toBe('attachment; filename="wc_2022_events.ndjson"');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = await get('/v1/export?league=wc&season=2022', { ...auth(key), 'accept-encoding': 'br;q=1.0, gzip;q=0.8' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['content-type']).toBe('application/x-ndjson');
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const refused = await get('/v1/export?league=wc&season=2022', { ...auth(key), 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.rawPayload.equals(plain.rawPayload)).toBe(true);
    const plays = await get('/v1/export?league=wc&season=2022&entity=plays', { ...auth(key), 'accept-encoding': 'gzip' });
    expect(plays.headers['content-disposition']).toBe('attachment; filename="wc_2022_plays.ndjson"');
    expect(gunzipSync(plays.rawPayload).toString()).toBe((await get('/v1/export?league=wc&season=2022&entity=plays')).body);
  });

  describe('from / to', () => {
    let events: { id: string; ts: string }[];
    let lines: string[];
    beforeAll(async () => {
      lines = await exportLines('league=wc&season=2022');
      events = lines.map((l) => parse(l));
    });
    const ids = async (q: string) => (await exportLines(`league=wc&season=2022&${q}`)).map((l) => parse<{ id: string }>(l).id);
    const expected = (keep: (ts: string) => boolean) => events.filter((e) => keep(e.ts)).map((e) => e.id);
    const plusMs = (ts: string, ms: number) => new Date(Date.parse(ts) + ms).toISOString();

    it('applies a date-time to ts: from inclusive, to exclusive, to the millisecond', async () => {
      const ts = events[40].ts;
      expect(await ids(`from=${ts}`)).toEqual(expected((x) => x >= ts));
      expect((await ids(`from=${ts}`))[0]).toBe(events.find((e) => e.ts === ts)?.id);
      expect(await ids(`from=${plusMs(ts, 1)}`)).toEqual(expected((x) => x > ts));
      expect(await ids(`to=${ts}`)).toEqual(expected((x) => x < ts));
      expect(await ids(`to=${plusMs(ts, 1)}`)).toEqual(expected((x) => x <= ts));
      const a = events[10].ts;
      const b = events[30].ts;
      expect(await ids(`from=${a}&to=${b}`)).toEqual(expected((x) => x >= a && x < b));
    });

    it('takes dates (midnight UTC), offsets and times without seconds', async () => {
      expect(await ids('from=2022-12-01')).toEqual(expected((x) => x >= '2022-12-01T00:00:00.000Z'));
      expect(await ids('to=2022-12-01')).toEqual(expected((x) => x < '2022-12-01T00:00:00.000Z'));
      expect(await ids('from=2022-11-25&to=2022-11-26')).toEqual(expected((x) => x.startsWith('2022-11-25')));
      expect(await ids(`from=${encodeURIComponent('2022-12-01T01:00:00+01:00')}`)).toEqual(expected((x) => x >= '2022-12-01T00:00:00.000Z'));
      expect(await ids('from=2022-12-01T18:30')).toEqual(expected((x) => x >= '2022-12-01T18:30:00.000Z'));
    });

    it("applies to the competition's date for competitions and plays", async () => {
      const comps = (await exportLines('league=wc&season=2022&entity=competitions')).map((l) => parse<{ id: string; date: string }>(l));
      const cids = async (q: string) => (await exportLines(`league=wc&season=2022&entity=competitions&${q}`)).map((l) => parse<{ id: string }>(l).id);
      const byDate = (keep: (d: string) => boolean) => comps.filter((c) => keep(c.date)).map((c) => c.id);
      expect(await cids('from=2022-12-18')).toEqual(byDate((d) => d >= '2022-12-18'));
      expect(await cids('from=2022-12-18')).toHaveLength(1);
      expect(await cids('to=2022-12-18')).toEqual(byDate((d) => d < '2022-12-18'));
      // A date's competitions sit at its midnight: a later instant that day excludes them from `from` and includes them in `to`.
      expect(await cids('from=2022-12-17T00:00:01Z')).toEqual(byDate((d) => d >= '2022-12-18'));
      expect(await cids('to=2022-12-17T00:00:01Z')).toEqual(byDate((d) => d <= '2022-12-17'));
      const plays = (await exportLines('league=wc&season=2022&entity=plays&from=2022-12-09&to=2022-12-11')).map((l) => parse<{ competition_id: string }>(l));
      const inRange = new Set(byDate((d) => d >= '2022-12-09' && d < '2022-12-11'));
      expect(inRange.size).toBe(4);
      expect(plays.length).toBeGreaterThan(0);
      expect(new Set(plays.map((p) => p.competition_id))).toEqual(inRange);
    });
  });

  describe('after resumes with exactly the rest', () => {
    it('for events, plays and competitions', async () => {
      for (const [entity, idOf] of [
        ['events', (r: { id?: string }) => r.id],
        ['plays', (r: { competition_id?: string; seq?: number }) => `${r.competition_id}:${r.seq}`],
        ['competitions', (r: { id?: string }) => r.id],
      ] as const) {
        const all = await exportLines(`league=wc&season=2022&entity=${entity}`);
        for (const k of [0, 17, all.length - 2, all.length - 1]) {
          const after = idOf(parse(all[k]));
          expect(await exportLines(`league=wc&season=2022&entity=${entity}&after=${encodeURIComponent(String(after))}`)).toEqual(all.slice(k + 1));
        }
      }
    });

    it('combines with from and to', async () => {
      const all = (await exportLines('league=wc&season=2022&entity=competitions&from=2022-12-01&to=2022-12-15')).map((l) => parse<{ id: string }>(l).id);
      const rest = (await exportLines(`league=wc&season=2022&entity=competitions&from=2022-12-01&to=2022-12-15&after=${all[2]}`)).map((l) => parse<{ id: string }>(l).id);
      expect(rest).toEqual(all.slice(3));
      const early = (await exportLines('league=wc&season=2022&entity=competitions')).map((l) => parse<{ id: string }>(l).id)[0];
      // An `after` before `from` starts at `from`.
      expect((await exportLines(`league=wc&season=2022&entity=competitions&from=2022-12-01&to=2022-12-15&after=${early}`)).map((l) => parse<{ id: string }>(l).id)).toEqual(all);
    });

    it('refuses an after that is not a record of this export', async () => {
      const other = parse<{ id: string }>((await exportLines('league=wc&season=2018&entity=competitions'))[0]).id;
      expectError(await get(`/v1/export?league=wc&season=2022&entity=competitions&after=${other}`), 400, 'invalid_request', { code: 'invalid_parameter', param: 'after' });
      expectError(await get(`/v1/export?league=wc&season=2022&entity=plays&after=${other}:1`), 400, 'invalid_request', { param: 'after' });
      expectError(await get('/v1/export?league=wc&season=2022&after=12'), 400, 'invalid_request', { param: 'after' });
      expectError(await get('/v1/export?league=wc&season=2022&entity=plays&after=soccer_wc_1'), 400, 'invalid_request', { param: 'after' });
    });
  });

  it('serves only what the archive product may read: final competitions before today', async () => {
    const today = new Date(t.clock.now()).toISOString().slice(0, 10);
    const games = (await restItems(`/v1/games?league=sbl&date=${today}`, 100)).map((g) => parse<{ id: string; competition_id: string; status: string }>(g));
    const game = games.find((g) => g.status !== 'final');
    if (!game) throw new Error('no scheduled sbl game today');
    const comps = (await exportLines(`league=sbl&season=${today.slice(0, 4)}&entity=competitions`)).map((l) => parse<{ id: string }>(l).id);
    expect(comps).toContain(game.competition_id);
    const [stored] = await t.services.events.append([
      {
        type: 'score', tier: 'confirmed', game_id: game.id, competition_id: game.competition_id, sport: 'basketball', league: 'sbl',
        season_id: `sbl_${today.slice(0, 4)}`, team: 'HAR', event_type: 'two_pointer', points: 2, clock: '10:00',
        ts: new Date(t.clock.now()).toISOString(), agreement: 1, reporters: 3, latency_ms: 10, probability: 1, provisional_id: null, retracted_id: null,
      },
    ]);
    const events = (await exportLines(`league=sbl&season=${today.slice(0, 4)}`)).map((l) => parse<{ id: string; game_id: string }>(l));
    expect(events.length).toBeGreaterThan(1000);
    expect(events.map((e) => e.id)).not.toContain(stored.event.id);
    expect(events.some((e) => e.game_id === game.id)).toBe(false);
    // The REST list of that game needs the live product too: the export and REST agree.
    expectError(await get(`/v1/games/${game.id}/events`), 403, 'permission_error', { code: 'product_not_in_plan' });
  });

  it('GET /v1/seasons counts each season’s competitions and events (how deep the archive goes)', async () => {
    const seasons = (await restItems('/v1/seasons?league=wc', 100)).map((s) => parse<{ id: string; start: string; competitions: number; events: number }>(s));
    expect(seasons.map((s) => s.id)).toEqual(['wc_2014', 'wc_2018', 'wc_2022', 'wc_2026']);
    for (const s of seasons.filter((x) => x.id !== 'wc_2026')) {
      expect(s.competitions).toBe((await exportLines(`league=wc&season=${s.id}&entity=competitions`)).length);
      expect(s.events).toBe((await exportLines(`league=wc&season=${s.id}`)).length);
    }
    expect(seasons[0].start).toBe('2014-06-12');
    const intl = (await restItems('/v1/seasons?league=intl', 100)).map((s) => parse<{ id: string; competitions: number; events: number }>(s));
    expect(intl[0].id).toBe('intl_2000');
    expect(intl.every((s) => s.competitions > 0)).toBe(true);
  });

  describe('closed seasons are cached as files', () => {
    const EVENTS = 3000;
    const cacheDir = () => path.join(t.dataDir, 'export-cache');
    const cached = (league: string) => (fs.existsSync(cacheDir()) ? fs.readdirSync(cacheDir()).filter((f) => f.startsWith(`${league}~`)) : []);
    const today = () => new Date(t.clock.now()).toISOString().slice(0, 10);
    beforeAll(async () => {
      await generateLarge(t.db, { league: 'xbc', events: EVENTS, seasons: 1, firstSeason: 2023, seed: 3, today: today() });
      await generateLarge(t.db, { league: 'xbd', events: 30_000, seasons: 1, firstSeason: 2023, seed: 4, today: today() });
    }, 120_000);

    it('serves the second export of a whole closed season from the file the first one wrote, byte for byte', async () => {
      const stats = t.services.exports.stats;
      const before = stats.rowsFetched;
      const first = await get('/v1/export?league=xbc&season=2023');
      expect(first.statusCode).toBe(200);
      expect(first.headers['x-svc-export-cache']).toBe('miss');
      expect(ndjson(first.body)).toHaveLength(EVENTS);
      expect(stats.rowsFetched - before).toBe(EVENTS);
      expect(cached('xbc')).toHaveLength(1);
      expect(cached('xbc')[0]).toMatch(/\.ndjson$/);

      const second = await get('/v1/export?league=xbc&season=2023');
      expect(second.headers['x-svc-export-cache']).toBe('hit');
      expect(second.headers['content-type']).toMatch(/^application\/x-ndjson/);
      expect(second.headers['content-disposition']).toBe(first.headers['content-disposition']);
      expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(stats.rowsFetched - before).toBe(EVENTS);
      const gz = await t.app.inject({ url: '/v1/export?league=xbc&season=2023', headers: { ...auth(key), 'accept-encoding': 'gzip' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.rawPayload).equals(first.rawPayload)).toBe(true);
      // The file is the REST view: the same lines as an export that bypasses the cache.
      const uncached = await exportLines('league=xbc&season=2023&from=2000-01-01');
      expect(ndjson(second.body)).toEqual(uncached);
    });

    it('an event appended to the season makes the next export read the database and replace the file', async () => {
      await get('/v1/export?league=xbc&season=2023');
      const c = await t.db.kysely.selectFrom('competitions').select(['id', 'n', 'season_id', 'league']).where('league', '=', 'xbc').orderBy('id').executeTakeFirstOrThrow();
      const [added] = await t.services.events.append([
        {
          type: 'score', tier: 'confirmed', game_id: `basketball_${c.n}`, competition_id: c.id, sport: 'basketball', league: c.league, season_id: c.season_id,
          team: 'ZZZ', event_type: 'correction', points: 2, clock: null, ts: new Date(t.clock.now()).toISOString(), agreement: 1, reporters: 0, latency_ms: 0, probability: 1,
          provisional_id: null, retracted_id: null,
        },
      ]);
      const res = await get('/v1/export?league=xbc&season=2023');
      expect(res.headers['x-svc-export-cache']).toBe('miss');
      const lines = ndjson(res.body);
      expect(lines).toHaveLength(EVENTS + 1);
      expect(parse<{ id: string }>(lines[lines.length - 1]).id).toBe(added.event.id);
      expect(cached('xbc')).toHaveLength(1);
      const again = await get('/v1/export?league=xbc&season=2023');
      expect(again.headers['x-svc-export-cache']).toBe('hit');
      expect(again.rawPayload.equals(res.rawPayload)).toBe(true);
    });

    it('another key’s sandbox replay changes neither anyone else’s export nor its cache; its owner’s cursor covers the replay', async () => {
      const cursorSeq = (c: unknown) => JSON.parse(Buffer.from(String(c), 'base64url').toString())[1] as number;
      const first = await get('/v1/export?league=wc&season=2022');
      expect(first.statusCode).toBe(200);
      const warm = await get('/v1/export?league=wc&season=2022');
      expect(warm.headers['x-svc-export-cache']).toBe('hit');
      // Another key replays the 2022 final (speed 1: the replay's own goals are far away), and its
      // replay's game gets two events, as a replay playing would append them.
      const owner = await t.key({ products: ['live', 'archive'] });
      const created = await t.app.inject({ method: 'POST', url: '/v1/replays', headers: { ...auth(owner), 'content-type': 'application/json' }, payload: { game_id: 'soccer_21728', speed: 1 } });
      expect(created.statusCode, created.body).toBe(201);
      const replayGame = created.json().data.game_id as string;
      const replay = await t.db.kysely.selectFrom('competitions').select(['id', 'season_id', 'owner_key_id']).where('n', '=', Number(replayGame.split('_').pop())).where('sport', '=', 'soccer').executeTakeFirstOrThrow();
      expect(replay.season_id).toBe('wc_2022');
      const replayed = await t.services.events.append(
        [1, 2].map((i) => ({
          type: 'score' as const, tier: 'confirmed' as const, game_id: replayGame, competition_id: replay.id, sport: 'soccer', league: 'wc', season_id: 'wc_2022', team: 'ARG',
          event_type: 'goal', points: 1, clock: null, ts: new Date(t.clock.now() + i).toISOString(), agreement: 1, reporters: 3, latency_ms: 5, probability: 1,
          provisional_id: null, retracted_id: null, owner_key_id: replay.owner_key_id,
        })),
      );
      const after = await get('/v1/export?league=wc&season=2022');
      expect(after.headers['x-svc-export-cache']).toBe('hit');
      expect(after.rawPayload.equals(first.rawPayload)).toBe(true);
      // The cursor does not move back to before the replay's events: they are no one's but the owner's.
      expect(cursorSeq(after.headers['x-changes-cursor'])).toBeGreaterThanOrEqual(cursorSeq(warm.headers['x-changes-cursor']));
      const otherFeed = (await get(`/v1/changes?since=${String(after.headers['x-changes-cursor'])}&limit=1000`)).json().data as { object_id: string }[];
      expect(otherFeed.map((c) => c.object_id)).not.toContain(replayed[0].event.id);
      // The owner's export holds no replay either, and its cursor lets its feed bring the replay's events.
      const mine = await get('/v1/export?league=wc&season=2022', auth(owner));
      expect(mine.rawPayload.equals(first.rawPayload)).toBe(true);
      const ownerFeed = (await get(`/v1/changes?since=${String(mine.headers['x-changes-cursor'])}&limit=1000`, auth(owner))).json().data as { object_id: string }[];
      expect(ownerFeed.map((c) => c.object_id)).toEqual(expect.arrayContaining(replayed.map((e) => e.event.id)));
    });

    it('open seasons, from/to, after and other entities always read the database', async () => {
      const first = (await exportLines('league=xbc&season=2023'))[0];
      const id = parse<{ id: string }>(first).id;
      for (const q of ['league=xbc&season=2023&from=2000-01-01', `league=xbc&season=2023&after=${id}`, 'league=xbc&season=2023&entity=plays', 'league=xbc&season=2023&entity=competitions']) {
        const res = await get(`/v1/export?${q}`);
        expect(res.statusCode, q).toBe(200);
        expect(res.headers['x-svc-export-cache'], q).toBeUndefined();
      }
      // A season with a game still to be played (today's, from the schedule) is not closed.
      const game = await t.db.kysely.selectFrom('competitions').select(['league', 'season_id']).where('status', '!=', 'final').orderBy('id').executeTakeFirstOrThrow();
      const open = await get(`/v1/export?league=${game.league}&season=${game.season_id}`);
      expect(open.statusCode, open.body.slice(0, 300)).toBe(200);
      expect(open.headers['x-svc-export-cache']).toBeUndefined();
      expect(cached(game.league)).toEqual([]);
    });

    it('an export the client abandons leaves no file behind', async () => {
      const base = await baseUrl();
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${base}/v1/export?league=xbd&season=2023`, { headers: auth(key) }, (res) => {
          expect(res.headers['x-svc-export-cache']).toBe('miss');
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      });
      const stats = t.services.exports.stats;
      for (let i = 0; i < 200 && stats.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 200));
      expect(cached('xbd')).toEqual([]);
      const full = await get('/v1/export?league=xbd&season=2023');
      expect(full.headers['x-svc-export-cache']).toBe('miss');
      expect(ndjson(full.body)).toHaveLength(30_000);
      expect(cached('xbd')).toHaveLength(1);
    });
    it('keeps the CSV and Parquet of a closed season too: the second download of each is a file read, byte for byte; an append replaces them', async () => {
      await get('/v1/export?league=xbd&season=2023');
      for (const format of ['parquet', 'csv']) {
        const first = await get(`/v1/export?league=xbd&season=2023&format=${format}`);
        expect(first.statusCode).toBe(200);
        expect(first.headers['x-svc-export-cache'], format).toBe('miss');
        const second = await get(`/v1/export?league=xbd&season=2023&format=${format}`);
        expect(second.headers['x-svc-export-cache'], format).toBe('hit');
        expect(second.headers['content-type']).toBe(first.headers['content-type']);
        expect(second.rawPayload.equals(first.rawPayload), format).toBe(true);
        // The same bytes as the format made from the database's lines, past the cache.
        const uncached = await get(`/v1/export?league=xbd&season=2023&format=${format}&from=2000-01-01`);
        expect(uncached.headers['x-svc-export-cache']).toBeUndefined();
        expect(uncached.rawPayload.equals(first.rawPayload), format).toBe(true);
      }
      expect(cached('xbd').map((f) => path.extname(f)).sort()).toEqual(['.csv', '.ndjson', '.parquet']);
      const before = (await get('/v1/export?league=xbd&season=2023&format=parquet')).rawPayload;
      const c = await t.db.kysely.selectFrom('competitions').select(['id', 'n', 'season_id', 'league']).where('league', '=', 'xbd').orderBy('id').executeTakeFirstOrThrow();
      await t.services.events.append([
        {
          type: 'score', tier: 'confirmed', game_id: `basketball_${c.n}`, competition_id: c.id, sport: 'basketball', league: c.league, season_id: c.season_id,
          team: 'ZZZ', event_type: 'correction', points: 2, clock: null, ts: new Date(t.clock.now()).toISOString(), agreement: 1, reporters: 0, latency_ms: 0, probability: 1,
          provisional_id: null, retracted_id: null,
        },
      ]);
      const after = await get('/v1/export?league=xbd&season=2023&format=parquet');
      expect(after.headers['x-svc-export-cache']).toBe('miss');
      expect(after.rawPayload.equals(before)).toBe(false);
      expect((await get('/v1/export?league=xbd&season=2023&format=parquet')).rawPayload.equals(after.rawPayload)).toBe(true);
      // One file per format: the newer head replaced the older (the CSV's waits for its next download).
      expect(cached('xbd').filter((f) => f.endsWith('.parquet'))).toHaveLength(1);
    });
  });

  describe('refusals', () => {
    it('400 names the missing or bad parameter', async () => {
      expectError(await get('/v1/export?season=2022'), 400, 'invalid_request', { code: 'missing_parameter', param: 'league' });
      expectError(await get('/v1/export?league=wc'), 400, 'invalid_request', { code: 'missing_parameter', param: 'season' });
      expectError(await get('/v1/export'), 400, 'invalid_request', { code: 'missing_parameter', param: 'league' });
      for (const bad of ['2022-13-01', '2022-02-30', 'yesterday', '2022-11-20T25:00Z', '2022-11-20T10:00:00+25:00', '20221120', '2022-11-20T10:00:00ZZ']) {
        expectError(await get(`/v1/export?league=wc&season=2022&from=${encodeURIComponent(bad)}`), 400, 'invalid_request', { code: 'invalid_parameter', param: 'from' });
        expectError(await get(`/v1/export?league=wc&season=2022&to=${encodeURIComponent(bad)}`), 400, 'invalid_request', { code: 'invalid_parameter', param: 'to' });
      }
      expectError(await get('/v1/export?league=wc&season=2022&from=2022-12-01&to=2022-12-01'), 400, 'invalid_request', { param: 'to' });
      expectError(await get('/v1/export?league=wc&season=2022&from=2022-12-02&to=2022-12-01'), 400, 'invalid_request', { param: 'to' });
      expectError(await get('/v1/export?league=wc&season=2022&entity=games'), 400, 'invalid_request', { code: 'invalid_parameter', param: 'entity' });
      expectError(await get('/v1/export?league=wc&season=2022&sport=soccer'), 400, 'invalid_request', { code: 'unknown_parameter', param: 'sport' });
      expectError(await get('/v1/export?league=wc&season=2022&form=2022-12-01'), 400, 'invalid_request', { code: 'unknown_parameter', param: 'form' });
      expectError(await get('/v1/export?league=nope&season=2022'), 400, 'invalid_request', { param: 'league' });
      expectError(await get('/v1/export?league=wc&season=1930'), 400, 'invalid_request', { param: 'season' });
      expectError(await get('/v1/export?league=wc&season=sbl_2026'), 400, 'invalid_request', { param: 'season' });
    });

    it('401 without a valid key', async () => {
      expectError(await get('/v1/export?league=wc&season=2022', {}), 401, 'authentication_error', { code: 'missing_api_key' });
      expectError(await get('/v1/export?league=wc&season=2022', auth('svc_test_nopenopenopenopenopenope')), 401, 'authentication_error');
    });

    it('403 without the archive product, and outside the key’s sports or leagues', async () => {
      const liveOnly = await t.key({ products: ['live', 'report'] });
      expectError(await get('/v1/export?league=wc&season=2022', auth(liveOnly)), 403, 'permission_error', { code: 'product_not_in_plan' });
      const tennis = await t.key({ products: ['archive'], sports: ['tennis'] });
      expectError(await get('/v1/export?league=wc&season=2022', auth(tennis)), 403, 'permission_error', { code: 'sport_not_in_scope' });
      const intl = await t.key({ products: ['archive'], leagues: ['intl'] });
      expectError(await get('/v1/export?league=wc&season=2022&entity=competitions', auth(intl)), 403, 'permission_error', { code: 'sport_not_in_scope' });
      const soccerWc = await t.key({ products: ['archive'], sports: ['soccer'], leagues: ['wc'] });
      expect((await get('/v1/export?league=wc&season=2022', auth(soccerWc))).statusCode).toBe(200);
    });
  });

  describe('a large season, over a real socket', () => {
    const EVENTS = 100_000;
    let base: string;
    beforeAll(async () => {
      await generateLarge(t.db, { league: 'xbp', events: EVENTS, seasons: 1, firstSeason: 2024, seed: 7, today: new Date(t.clock.now()).toISOString().slice(0, 10) });
      base = await baseUrl();
    }, 180_000);

    /** Waits until the server stops fetching (socket buffers full, the export paused, no query running); returns rowsFetched then. */
    async function untilPaused(): Promise<number> {
      const stats = t.services.exports.stats;
      let last = -1;
      let still = 0;
      for (let i = 0; i < 200 && still < 4; i++) {
        await new Promise((r) => setTimeout(r, 150));
        still = stats.rowsFetched === last && stats.inFlight === 0 ? still + 1 : 0;
        last = stats.rowsFetched;
      }
      return stats.rowsFetched;
    }

    it('pauses while the client does not read (backpressure), then delivers everything', async () => {
      const stats = t.services.exports.stats;
      const before = stats.rowsFetched;
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get(`${base}/v1/export?league=xbp&season=2024`, { headers: auth(key) }, resolve).on('error', reject);
      });
      // A failed assertion must not leave this export open for the tests after it.
      try {
        expect(res.statusCode).toBe(200);
        res.pause();
        const paused = (await untilPaused()) - before;
        await new Promise((r) => setTimeout(r, 1000));
        expect(stats.rowsFetched - before).toBe(paused);
        expect(stats.inFlight).toBe(0);
        expect(stats.active).toBe(1);
        // Bounded by socket buffers plus about one page, far from the season.
        expect(paused).toBeLessThan(EVENTS / 2);
        let lines = 0;
        let bytes = 0;
        for await (const chunk of res) {
          const b: Buffer = chunk;
          bytes += b.length;
          for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) lines++;
        }
        expect(lines).toBe(EVENTS);
        expect(stats.rowsFetched - before).toBe(EVENTS);
        expect(stats.active).toBe(0);
        expect(bytes).toBeGreaterThan(EVENTS * 250);
      } finally {
        res.destroy();
      }
    });

    // How far a server gets before it sees the client gone depends on the kernel's socket buffers
    // (loopback receive buffers grow to tens of MB here): what it must not do is read on after.
    it('stops reading from the database when the client goes away mid-export', async () => {
      const stats = t.services.exports.stats;
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${base}/v1/export?league=xbp&season=2024&entity=plays`, { headers: auth(key) }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      });
      for (let i = 0; i < 200 && stats.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(stats.active).toBe(0);
      expect(stats.inFlight).toBe(0);
      const after = stats.rowsFetched;
      await new Promise((r) => setTimeout(r, 300));
      expect(stats.rowsFetched).toBe(after);
    });

    it('reads nothing more once a paused client goes away', async () => {
      const stats = t.services.exports.stats;
      const before = stats.rowsFetched;
      const req = http.get(`${base}/v1/export?league=xbp&season=2024&entity=plays`, { headers: auth(key) });
      req.on('error', () => undefined);
      const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
      let paused = 0;
      // A failed assertion must not leave this export open for the tests after it.
      try {
        res.pause();
        paused = await untilPaused();
        // The export is paused part-way, not finished into the socket buffers.
        expect(stats.active).toBe(1);
        expect(paused - before).toBeLessThan(EVENTS / 2);
      } finally {
        req.destroy();
      }
      for (let i = 0; i < 200 && stats.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(stats.active).toBe(0);
      await new Promise((r) => setTimeout(r, 300));
      expect(stats.rowsFetched).toBe(paused);
    });

    /** Opens an export and stops reading once its headers are in: it stays running, paused. */
    async function heldExport(query: string, as: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Promise<string>; cancel(): void }> {
      const req = http.get(`${base}/v1/export?${query}`, { headers: auth(as) });
      req.on('error', () => undefined);
      const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
      if (res.statusCode === 200) res.pause();
      const body = res.statusCode === 200 ? Promise.resolve('') : (async () => {
        let text = '';
        for await (const chunk of res) text += String(chunk);
        return text;
      })();
      return { status: res.statusCode ?? 0, headers: res.headers, body, cancel: () => req.destroy() };
    }

    // Two whole seasons through curl: a fixed amount of work, slow on a busy two-vCPU machine.
    it('answers other requests between pages while a reader that never pushes back takes a whole season', { timeout: 180_000 }, async () => {
      // curl into /dev/null reads as fast as the server writes: the export never waits on the socket.
      const stats = t.services.exports.stats;
      for (const entity of ['events', 'plays']) {
        const before = stats.rowsFetched;
        const curl = spawn('curl', ['-sS', '-o', '/dev/null', '-H', `authorization: Bearer ${key}`, `${base}/v1/export?league=xbp&season=2024&entity=${entity}&from=2024-01-01`]);
        const curlDone = new Promise<number | null>((resolve) => curl.once('close', resolve));
        while (stats.rowsFetched === before) await new Promise((r) => setImmediate(r));
        // The probe is sent and answered by this same event loop: it gets through only if the
        // export gives the loop back between pages, not once the season is out.
        const livez = await fetch(`${base}/livez`);
        const fetchedAtAnswer = stats.rowsFetched - before;
        expect(livez.status).toBe(200);
        expect(await curlDone, entity).toBe(0);
        const total = stats.rowsFetched - before;
        expect(total).toBeGreaterThan(10 * 1000);
        expect(fetchedAtAnswer, `${entity}: /livez answered after ${fetchedAtAnswer} of ${total} rows`).toBeLessThan(total / 2);
      }
    });

    it('runs as many exports at once per key as its plan allows, 429 too_many_exports past it, and a cancelled one frees its slot at once', { timeout: 120_000 }, async () => {
      const stats = t.services.exports.stats;
      const q = 'league=xbp&season=2024&entity=plays';
      for (const [plan, limit] of [['free', 1], ['pro', 4], ['enterprise', 16]] as const) {
        const k = await t.key({ products: ['archive'], plan });
        const held = [];
        try {
          for (let i = 0; i < limit; i++) held.push(await heldExport(q, k));
          expect(held.map((h) => h.status)).toEqual(held.map(() => 200));
          const refused = await heldExport(q, k);
          expect(refused.status, plan).toBe(429);
          expect(refused.headers['retry-after']).toBe('5');
          const body: unknown = JSON.parse(await refused.body);
          expect(body).toMatchObject({ error: { type: 'rate_limit_error', code: 'too_many_exports' } });
          // Another key's exports are its own.
          const other = await heldExport(q, key);
          expect(other.status).toBe(200);
          other.cancel();
          // Cancelling one (the client goes away) lets the next in, without waiting for the export to notice.
          held.shift()?.cancel();
          let again = await heldExport(q, k);
          for (let i = 0; i < 50 && again.status === 429; i++) {
            await new Promise((r) => setTimeout(r, 20));
            again = await heldExport(q, k);
          }
          expect(again.status, plan).toBe(200);
          held.push(again);
        } finally {
          for (const h of held) h.cancel();
        }
      }
      for (let i = 0; i < 200 && stats.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(stats.active).toBe(0);
      // An internal key is not counted.
      const internal = await t.key({ products: ['archive'], plan: 'internal' });
      const many = [];
      for (let i = 0; i < 20; i++) many.push(await heldExport(q, internal));
      for (const h of many) h.cancel();
      expect(many.map((h) => h.status)).toEqual(many.map(() => 200));
    });

    it('refuses past the limit before reading anything, and a refused or invalid request holds no slot', async () => {
      const k = await t.key({ products: ['archive'], plan: 'free' });
      for (let i = 0; i < 3; i++) expectError(await get('/v1/export?league=xbp&season=1999', auth(k)), 400, 'invalid_request', { param: 'season' });
      const one = await heldExport('league=xbp&season=2024', k);
      try {
        expect(one.status).toBe(200);
        // The held export goes on reading until its socket pushes back, so rows read say nothing
        // here; what counts is that the refused request never started an export of its own.
        const started = t.services.exports.stats.started;
        const refused = await get('/v1/export?league=xbp&season=2024', auth(k));
        expectError(refused, 429, 'rate_limit_error', { code: 'too_many_exports' });
        expect(t.services.exports.stats.started).toBe(started);
      } finally {
        one.cancel();
      }
    });

    it('lists the generated season with its counts', async () => {
      const [s] = (await get('/v1/seasons?league=xbp')).json().data;
      expect(s).toMatchObject({ id: 'xbp_2024', label: '2024', synthetic: true, events: EVENTS });
      expect(s.competitions).toBe((await exportLines('league=xbp&season=2024&entity=competitions')).length);
    });

    it('svc export downloads to a file and resumes a cut download', async () => {
      const dir = tmpDir('svc-export-cli-');
      const sink = { text: '', write(s: string) { this.text += s; return true; } };
      for (const [entity, extra] of [['events', []], ['plays', ['--no-gzip']]] as const) {
        const full = (await get(`/v1/export?league=xbp&season=2024&entity=${entity}`)).rawPayload;
        const file = path.join(dir, `${entity}.ndjson`);
        const args = parseExportArgs(['--league', 'xbp', '--season', '2024', '--entity', entity, '--out', file, '--url', base, '--key', key, ...extra], { host: '127.0.0.1', port: 8080 }, {});
        const first = await runExport(args, sink);
        expect(first.resumedAfter).toBeUndefined();
        expect(first.records).toBe(ndjson(full.toString()).length);
        expect(fs.readFileSync(file).equals(full)).toBe(true);
        // Cut mid-line, as an interrupted download leaves it.
        let cut = Math.floor(full.length * 0.6);
        while (full[cut - 1] === 0x0a) cut++;
        fs.truncateSync(file, cut);
        const keptLines = ndjson(full.subarray(0, full.lastIndexOf(0x0a, cut - 1) + 1).toString());
        const second = await runExport(args, sink);
        const last = parse<{ id?: string; competition_id?: string; seq?: number }>(keptLines[keptLines.length - 1]);
        expect(second.resumedAfter).toBe(entity === 'events' ? last.id : `${last.competition_id}:${last.seq}`);
        expect(second.records).toBe(first.records - keptLines.length);
        expect(fs.readFileSync(file).equals(full)).toBe(true);
      }
      expect(sink.text).toContain('resuming after');
      expect(() => parseExportArgs(['--season', '2024'], { host: '127.0.0.1', port: 8080 }, { SVC_API_KEY: key })).toThrow(ExportUsageError);
      expect(() => parseExportArgs(['--league', 'wc', '--season', '2022'], { host: '127.0.0.1', port: 8080 }, {})).toThrow(/SVC_API_KEY/);
      expect(parseExportArgs(['--league=wc', '--season=wc_2022'], { host: '0.0.0.0', port: 9000 }, { SVC_API_KEY: key })).toMatchObject({
        out: 'wc_2022_events.ndjson', url: 'http://127.0.0.1:9000', entity: 'events', gzip: true,
      });
    });
  });
});
