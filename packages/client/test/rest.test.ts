import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  Page,
  PermissionDeniedError,
  RateLimitError,
  Svc,
  type Competition,
  type Event,
} from '../src/index.js';
import { generateLarge } from '../../server/src/archive/large.js';
import { goalPlays, liveSvc, type LiveSvc } from './support.js';

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('REST resources against a real svc', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc();
  });
  afterAll(() => s.close());

  it('me() returns the key record itself', async () => {
    const me = await s.svc.me();
    expect(me.plan).toBe('internal');
    expect(me.products).toContain('live');
    expect(me.rate_limit.limit).toBeGreaterThan(0);
  });

  it('pagination: for await over small pages equals the unpaginated list; pages chain with next_cursor', async () => {
    const params = { league: 'wc', season: '2022' } as const;
    const whole = await s.svc.competitions.list({ ...params, limit: 1000 });
    expect(whole.hasNextPage()).toBe(false);
    expect(whole.data.length).toBe(64);
    const walked = await all(s.svc.competitions.list({ ...params, limit: 7 }));
    expect(walked).toEqual(whole.data);

    const first = await s.svc.competitions.list({ ...params, limit: 10 });
    expect(first).toBeInstanceOf(Page);
    expect(first.data).toHaveLength(10);
    expect(first.hasNextPage()).toBe(true);
    expect(typeof first.next_cursor).toBe('string');
    const second = await first.getNextPage();
    expect(second.data).toEqual(whole.data.slice(10, 20));
    const pages: Competition[][] = [];
    for await (const page of first.iterPages()) pages.push(page.data);
    expect(pages.flat()).toEqual(whole.data);
    expect(pages).toHaveLength(7);
    const last = (await all(first.iterPages())).at(-1);
    expect(last?.hasNextPage()).toBe(false);
    await expect(last?.getNextPage()).rejects.toThrow(/no next page/);
  });

  it('reference data: teams, rosters, players, venues, seasons', async () => {
    const teams = await s.svc.teams.list({ league: 'wc', limit: 5 });
    expect(teams.data).toHaveLength(5);
    const arg = await s.svc.teams.get('team:wc:ARG');
    expect(arg.code).toBe('ARG');
    const roster = await all(s.svc.teams.roster('team:wc:ARG', { season: 'wc_2022' }));
    expect(roster.length).toBeGreaterThan(0);
    expect(roster.every((r) => r.team_id === 'team:wc:ARG' && r.season === 'wc_2022')).toBe(true);
    const player = await s.svc.players.get(roster[0].player_id);
    expect(player.id).toBe(roster[0].player_id);
    const found = await s.svc.players.list({ league: 'wc', search: player.name.slice(0, 4), limit: 1000 });
    expect(found.data.map((p) => p.id)).toContain(player.id);
    const venues = await s.svc.venues.list({ league: 'wc', limit: 3 });
    expect(await s.svc.venues.get(venues.data[0].id)).toEqual(venues.data[0]);
    const seasons = await all(s.svc.seasons.list({ league: 'wc' }));
    expect(seasons.map((x) => x.label)).toContain('2022');
  });

  it('competitions, plays, games and their events', async () => {
    const final = (await s.svc.competitions.list({ league: 'wc', season: '2022', limit: 1000 })).data.at(-1);
    if (!final) throw new Error('no competition');
    expect(await s.svc.competitions.get(final.id)).toEqual(final);
    const plays = await all(s.svc.competitions.plays(final.id, { limit: 2 }));
    expect(plays.length).toBeGreaterThan(2);
    expect(plays.every((p) => p.schema === 'svc.play.v1' && p.competition_id === final.id)).toBe(true);
    const gameId = final.id.replace(/^soccer_wc_/, 'soccer_');
    const game = await s.svc.games.get(gameId);
    expect(game.competition_id).toBe(final.id);
    const events = await all(s.svc.games.events(gameId, { limit: 2 }));
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.schema === 'svc.event.v1' && e.game_id === gameId)).toBe(true);
    const games = await s.svc.games.list({ sport: 'soccer', league: 'wc', season: '2022', limit: 3 });
    expect(games.data.every((g) => g.sport === 'soccer')).toBe(true);
  });

  it('reports.create and plays.create: one returns the record, a list returns the list', async () => {
    const game = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 2 })).data[1];
    const competitor = game.competitors[0].entity_id;
    const team = competitor.split(':').pop() ?? '';
    const one = await s.svc.plays.create(game.competition_id, goalPlays(competitor, 1, Date.now() - 120_000)[0]);
    expect(one.competition_id).toBe(game.competition_id);
    expect(one.seq).toBe(1);
    const two = await s.svc.plays.create(game.competition_id, goalPlays(competitor, 2, Date.now() - 60_000));
    expect(two.map((p) => p.seq)).toEqual([2, 3]);
    const report = await s.svc.reports.create({ game_id: game.id, team, points: 1, ref: 'client-test-1' });
    expect(report.id).toMatch(/^rpt_/);
    const batch = await s.svc.reports.create([
      { game_id: game.id, team, points: 1, ref: 'client-test-2' },
      { game_id: game.id, team, points: 1, ref: 'client-test-3' },
    ]);
    expect(batch).toHaveLength(2);
    // A goal disallowed after review: withdrawn by its seq; a second withdrawal is a ConflictError.
    const withdrawn = await s.svc.plays.withdraw(game.competition_id, { withdraws: one.seq });
    expect(withdrawn).toMatchObject({ event_type: 'score_withdrawn', withdraws: String(one.seq), competitor_id: competitor, points: -1, seq: 4 });
    expect(withdrawn.retracted_id).toMatch(/^evt_/);
    await expect(s.svc.plays.withdraw(game.competition_id, { withdraws: withdrawn.retracted_id ?? '' })).rejects.toMatchObject({ status: 409, code: 'already_withdrawn', param: 'withdraws' });
    await expect(s.svc.plays.create(game.competition_id, { event_type: 'score_withdrawn', withdraws: 'evt_000099999999' })).rejects.toMatchObject({ status: 400, code: 'withdraws_unknown' });
  });

  it('webhooks: create, list, get, update, deliveries, replay, rotateSecret, enable, delete; notifications', async () => {
    const ep = await s.svc.webhooks.create({ url: 'https://example.com/hook', tier: 'confirmed', sports: ['soccer'] });
    expect(ep.secret).toMatch(/^whsec_/);
    expect(ep.status).toBe('enabled');
    expect((await all(s.svc.webhooks.list())).map((w) => w.id)).toContain(ep.id);
    const got = await s.svc.webhooks.get(ep.id);
    expect(got).not.toHaveProperty('secret');
    const updated = await s.svc.webhooks.update(ep.id, { description: 'scores', sports: null });
    expect(updated).toMatchObject({ id: ep.id, description: 'scores', sports: null });
    expect((await s.svc.webhooks.deliveries(ep.id, { status: 'pending' })).data).toEqual([]);
    const replay = await s.svc.webhooks.replay(ep.id, { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() });
    expect(replay.replayed).toBe(replay.delivery_ids.length);
    const rotated = await s.svc.webhooks.rotateSecret(ep.id);
    expect(rotated.secret).not.toBe(ep.secret);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    expect((await s.svc.webhooks.enable(ep.id)).status).toBe('enabled');
    expect(await s.svc.webhooks.delete(ep.id)).toEqual({ id: ep.id, deleted: true });
    await expect(s.svc.webhooks.get(ep.id)).rejects.toBeInstanceOf(NotFoundError);
    const notes = await s.svc.notifications.list();
    expect(Array.isArray(notes.data)).toBe(true);
  });

  it('the same Idempotency-Key replays the first answer instead of writing twice; another body with it is a ConflictError', async () => {
    const body = { url: 'https://example.com/idem', tier: 'confirmed' };
    const first = await s.svc.webhooks.create(body, { idempotencyKey: 'client-idem-1' });
    const again = await s.svc.webhooks.create(body, { idempotencyKey: 'client-idem-1' });
    expect(again).toEqual(first);
    const hooks = (await all(s.svc.webhooks.list())).filter((w) => w.url === body.url);
    expect(hooks).toHaveLength(1);
    await expect(s.svc.webhooks.create({ ...body, url: 'https://example.com/other' }, { idempotencyKey: 'client-idem-1' })).rejects.toMatchObject({
      name: 'ConflictError',
      code: 'idempotency_key_reused',
    });
    await s.svc.webhooks.delete(first.id);
  });

  it('replays: create, get, list, cancel; another key cannot see them; a bad game is a BadRequestError', async () => {
    const replay = await s.svc.replays.create({ game_id: 'soccer_21728', speed: 1 });
    expect(replay).toMatchObject({ source_game_id: 'soccer_21728', speed: 1, status: 'scheduled', reason: null });
    expect(replay.id).toMatch(/^rpl_/);
    expect((await s.svc.replays.get(replay.id)).game_id).toBe(replay.game_id);
    expect((await all(s.svc.replays.list({ limit: 1 }))).map((r) => r.id)).toContain(replay.id);
    const { data, response } = await s.svc.replays.get(replay.id).withResponse();
    expect(response.status).toBe(200);
    expect(data.id).toBe(replay.id);
    const other = s.client({ apiKey: await s.t.key({ products: ['live'] }) });
    await expect(other.replays.get(replay.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.games.get(replay.game_id)).rejects.toBeInstanceOf(NotFoundError);
    const cancelled = await s.svc.replays.cancel(replay.id);
    expect(cancelled).toMatchObject({ id: replay.id, status: 'cancelled', reason: 'cancelled by its key' });
    await expect(s.svc.replays.create({ game_id: 'soccer_999999999' })).rejects.toMatchObject({ status: 400, code: 'unknown_game', param: 'game_id' });
    await expect(s.svc.replays.create({ game_id: 'soccer_21728', speed: 601 })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('each error class from the real server, with status, type, code, param, requestId, headers', async () => {
    const bad = await s.client({ apiKey: 'svc_test_NotARealKeyNotARealKeyNotARealKey' }).me().catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect(bad).toMatchObject({ status: 401, type: 'authentication_error', code: 'invalid_api_key' });

    const soccerOnly = s.client({ apiKey: await s.t.key({ products: ['archive'], sports: ['basketball'] }) });
    const scope = await soccerOnly.teams.get('team:wc:ARG').catch((e: unknown) => e);
    expect(scope).toBeInstanceOf(PermissionDeniedError);
    expect(scope).toMatchObject({ status: 403, type: 'permission_error', code: 'sport_not_in_scope' });
    await expect(soccerOnly.webhooks.list()).rejects.toMatchObject({ status: 403, code: 'product_not_in_plan' });

    const missing = await s.svc.teams.get('team:wc:ZZZ').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, type: 'not_found' });

    const limit = await s.svc.teams.list({ limit: 5000 }).catch((e: unknown) => e);
    expect(limit).toBeInstanceOf(BadRequestError);
    expect(limit).toMatchObject({ status: 400, type: 'invalid_request', param: 'limit' });
    if (!(limit instanceof APIError)) throw limit;
    expect(limit.requestId).toMatch(/^req_/);
    expect(limit.headers['x-request-id']).toBe(limit.requestId);
    expect(limit.message).toContain('400');

    const final = (await s.svc.competitions.list({ league: 'wc', season: '2022', limit: 1 })).data[0];
    const conflict = await s.svc.plays.create(final.id, goalPlays(final.competitors[0].entity_id, 1, Date.now())[0]).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, type: 'conflict' });

    const free = s.client({ apiKey: await s.t.key({ plan: 'free', products: ['archive'] }) });
    let limited: unknown;
    for (let i = 0; i < 100 && !limited; i++) limited = await free.seasons.list({ limit: 1 }).then(() => undefined, (e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, type: 'rate_limit_error' });
    if (!(limited instanceof RateLimitError)) throw limited;
    expect(limited.retryAfter).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe('60');
  });
});

/** A TCP proxy that cuts the first connection it carries after `cutAfter` bytes from the server. */
async function cuttingProxy(target: number, cutAfter: number): Promise<{ url: string; connections: number; close(): Promise<void> }> {
  const state = { connections: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const n = state.connections++;
    const upstream = net.connect(target, '127.0.0.1');
    let carried = 0;
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (n === 0 && carried + chunk.length > cutAfter) {
        client.write(chunk.subarray(0, cutAfter - carried));
        client.destroy();
        upstream.destroy();
        return;
      }
      carried += chunk.length;
      client.write(chunk);
    });
    sockets.add(upstream);
    upstream.on('end', () => client.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

describe('export', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc();
  });
  afterAll(() => s.close());

  it('yields typed records of each entity; events equal the games’ REST events', async () => {
    const events: Event[] = await all(s.svc.export({ league: 'wc', season: '2022' }));
    const season = (await s.svc.seasons.list({ league: 'wc' })).data.find((x) => x.label === '2022');
    expect(events).toHaveLength(season?.events ?? -1);
    const firstGame = events[0].game_id;
    const rest = await all(s.svc.games.events(firstGame));
    expect(events.filter((e) => e.game_id === firstGame)).toEqual(rest);
    const comps = await all(s.svc.export({ league: 'wc', season: '2022', entity: 'competitions' }));
    expect(comps).toEqual((await s.svc.competitions.list({ league: 'wc', season: '2022', limit: 1000 })).data);
    const plays = await all(s.svc.export({ league: 'wc', season: '2022', entity: 'plays', to: '2022-11-21' }));
    expect(plays.length).toBeGreaterThan(0);
    expect(plays.every((p) => p.schema === 'svc.play.v1')).toBe(true);
  });

  it('resumes with after=<last id> when the connection drops: every record once, in order', async () => {
    const direct = await all(s.svc.export({ league: 'wc', season: '2022' }));
    const port = Number(new URL(s.baseUrl).port);
    // Early enough to cut the body whether or not it travels gzip-encoded.
    const proxy = await cuttingProxy(port, 1500);
    try {
      const viaProxy = new Svc({ apiKey: s.key, baseUrl: proxy.url, maxRetries: 2 });
      const resumed = await all(viaProxy.export({ league: 'wc', season: '2022' }));
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      expect(resumed.map((e) => e.id)).toEqual(direct.map((e) => e.id));
      expect(resumed).toEqual(direct);
    } finally {
      await proxy.close();
    }
  });

  it('waits out 429 too_many_exports (the plan’s concurrent exports) and retries, like any 429; without retries it is a RateLimitError', async () => {
    const free = await s.t.key({ products: ['archive'], plan: 'free' });
    // A season larger than the socket buffers, so an export of it stays open while unread.
    await generateLarge(s.t.db, { league: 'xbc', events: 60_000, seasons: 1, firstSeason: 2024, seed: 3, today: new Date().toISOString().slice(0, 10) });
    // The free plan's one export, held open by a reader that stops reading.
    const held = http.get(`${s.baseUrl}/v1/export?league=xbc&season=2024`, { headers: { authorization: `Bearer ${free}` } });
    held.on('error', () => undefined);
    const res = await new Promise<http.IncomingMessage>((resolve) => held.once('response', resolve));
    expect(res.statusCode).toBe(200);
    res.pause();
    const noRetry = s.client({ apiKey: free, maxRetries: 0 });
    const refused = await all(noRetry.export({ league: 'wc', season: '2022' })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: 'too_many_exports', retryAfter: 5 });
    // The held export ends a second later; the retry after Retry-After (5 s) gets the slot.
    setTimeout(() => held.destroy(), 1000);
    const started = Date.now();
    const events: Event[] = await all(s.client({ apiKey: free, maxRetries: 2 }).export({ league: 'wc', season: '2022' }));
    expect(events.length).toBeGreaterThan(100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
  });

  it('an archive-less key gets PermissionDeniedError', async () => {
    const live = s.client({ apiKey: await s.t.key({ products: ['live'] }) });
    await expect(all(live.export({ league: 'wc', season: '2022' }))).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('format csv and parquet: the bytes of the server’s own file, as many rows as records', async () => {
    const records = await all(s.svc.export({ league: 'wc', season: '2022', entity: 'plays' }));
    const chunks: Uint8Array[] = await all(s.svc.export({ league: 'wc', season: '2022', entity: 'plays', format: 'csv' }));
    const csv = Buffer.concat(chunks).toString('utf8');
    expect(csv.startsWith('competition_id,seq,period.unit,period.num,period.label,')).toBe(true);
    // No play holds a line break, so rows are lines: the header and one per record.
    expect(csv.split('\r\n').length - 2).toBe(records.length);
    const parquet = Buffer.concat(await all(s.svc.export({ league: 'wc', season: '2022', entity: 'plays', format: 'parquet' })));
    const direct = await fetch(`${s.baseUrl}/v1/export?league=wc&season=2022&entity=plays&format=parquet`, { headers: { authorization: `Bearer ${s.key}` } });
    expect(direct.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(parquet.equals(Buffer.from(await direct.arrayBuffer()))).toBe(true);
    expect(parquet.subarray(0, 4).toString('latin1')).toBe('PAR1');
  });

  it('games.list takes tz: an unknown zone is a BadRequestError naming tz', async () => {
    const err = await s.svc.games.list({ date: 'today', tz: 'Mars/Olympus' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'tz' });
    const page = await s.svc.games.list({ date: 'today', tz: 'America/New_York' });
    expect(Array.isArray(page.data)).toBe(true);
  });
});
