import { types } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIPromise, NotFoundError, Page, PagePromise, type Logger, type Team } from '../src/index.js';
import { goalPlays, liveSvc, type LiveSvc } from './support.js';

describe('raw responses against a real svc: withResponse() and asResponse()', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc();
  });
  afterAll(() => s?.close());

  /** A client whose fetches are counted. */
  function counted(): { svc: ReturnType<LiveSvc['client']>; calls: () => number } {
    let n = 0;
    const svc = s.client({
      fetch: (input, init) => {
        n++;
        return fetch(input, init);
      },
    });
    return { svc, calls: () => n };
  }

  it('withResponse(): the record, the Response and the request id the server sent', async () => {
    const pending = s.svc.teams.get('team:wc:ARG');
    expect(pending).toBeInstanceOf(APIPromise);
    expect(pending).toBeInstanceOf(Promise);
    expect(types.isPromise(pending)).toBe(true);
    const { data, response, requestId } = await pending.withResponse();
    const team: Team = data;
    expect(team).toMatchObject({ id: 'team:wc:ARG', name: 'Argentina' });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(requestId).toMatch(/^req_/);
    expect(requestId).toBe(response.headers.get('x-request-id'));
  });

  it('asResponse(): the Response with its body unread', async () => {
    const response = await s.svc.venues.get('lusail-stadium').asResponse();
    expect(response.status).toBe(200);
    expect(response.bodyUsed).toBe(false);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(await response.json()).toMatchObject({ data: { id: 'lusail-stadium', name: 'Lusail Stadium' } });
  });

  it('one request per call, however it is consumed', async () => {
    const { svc, calls } = counted();
    const pending = svc.games.get('soccer_21728');
    const [game, raw, res] = await Promise.all([pending, pending.withResponse(), pending.asResponse()]);
    expect(calls()).toBe(1);
    expect(game).toEqual(raw.data);
    expect(game.id).toBe('soccer_21728');
    expect(res).toBe(raw.response);
    // A method sends its request when called, as a Promise-returning method would; a list's
    // first page goes when it is awaited or iterated.
    svc.me();
    const later = svc.teams.list({ limit: 1 });
    await new Promise((r) => setTimeout(r, 200));
    expect(calls()).toBe(2);
    const [me, teams] = await Promise.all([svc.me(), later]);
    expect(me.plan).toBe('internal');
    expect(teams.data).toHaveLength(1);
    expect(calls()).toBe(4);
  });

  it('an error answer rejects withResponse() and asResponse() alike, with the typed error', async () => {
    const err = await s.svc.teams.get('team:wc:ZZZ').withResponse().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'resource_not_found', requestId: expect.stringMatching(/^req_/) });
    await expect(s.svc.teams.get('team:wc:ZZZ').asResponse()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('the events of a game that does not exist: NotFoundError resource_not_found, awaited or iterated', async () => {
    for (const id of ['soccer_99999999', 'tennis_1']) {
      const awaited = await s.svc.games.events(id).catch((e: unknown) => e);
      expect(awaited).toBeInstanceOf(NotFoundError);
      expect(awaited).toMatchObject({ status: 404, type: 'not_found', code: 'resource_not_found', param: 'id' });
      const iterated = await (async () => {
        for await (const ev of s.svc.games.events(id)) return ev;
      })().catch((e: unknown) => e);
      expect(iterated).toMatchObject({ status: 404, code: 'resource_not_found' });
    }
  });

  it('list methods: withResponse() gives the first page, which still pages on', async () => {
    const { svc, calls } = counted();
    const pending = svc.competitions.list({ league: 'wc', season: '2022', limit: 10 });
    expect(pending).toBeInstanceOf(PagePromise);
    expect(pending).toBeInstanceOf(Promise);
    const { data: page, response, requestId } = await pending.withResponse();
    expect(page).toBeInstanceOf(Page);
    expect(page.data).toHaveLength(10);
    expect(response.status).toBe(200);
    expect(requestId).toBe(response.headers.get('x-request-id'));
    expect(await pending).toBe(page);
    expect(calls()).toBe(1);
    const all = [];
    for await (const c of page) all.push(c.id);
    expect(all).toHaveLength(64);
    const first = await svc.games.events('soccer_21728', { limit: 2 }).asResponse();
    expect(((await first.json()) as { data: unknown[] }).data).toHaveLength(2);
  });

  it('writes too: plays.create(…).withResponse() is the play and a 201', async () => {
    const game = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 1 })).data[0];
    const competitor = game.competitors[0].entity_id;
    const { data, response, requestId } = await s.svc.plays.create(game.competition_id, goalPlays(competitor, 1, Date.now())[0], { idempotencyKey: `raw-${game.id}` }).withResponse();
    expect(data).toMatchObject({ competition_id: game.competition_id, seq: 1, competitor_id: competitor });
    expect(response.status).toBe(201);
    expect(requestId).toMatch(/^req_/);
    const batch = await s.svc.plays.create(game.competition_id, goalPlays(competitor, 2, Date.now() + 120_000)).withResponse();
    expect(batch.data.map((p) => p.seq)).toEqual([2, 3]);
  });

  it('the log line of a call carries the request id withResponse() gives', async () => {
    const lines: string[] = [];
    const keep = (m: string) => {
      lines.push(m);
    };
    const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
    const { requestId } = await s.client({ logLevel: 'info', logger }).seasons.list({ league: 'wc' }).withResponse();
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^svc GET /v1/seasons 200 \\d+ms request_id=${requestId}$`))]);
    expect(lines[0]).not.toContain(s.key);
  });
});
