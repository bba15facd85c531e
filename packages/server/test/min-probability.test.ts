import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate, ManualClock } from '../src/domain/clock.js';
import { createTodayGame } from '../src/sim/fixtures.js';
import { seededRandom } from '../src/sim/index.js';
import { expectError } from './contract.js';
import { auth, listen, testApp, type TestApp } from './helpers.js';
import { SseClient } from './sse-client.js';
import { connect, type Frame, type StreamClient } from './ws-client.js';

/**
 * `min_probability` (docs/stream.md, docs/webhooks.md): events whose confidence.probability is
 * below it are not sent on the stream (WebSocket query and subscribe, server-sent events) nor to a
 * webhook endpoint; a retraction of an event that was sent is always sent.
 */
interface Game {
  id: string;
  competition_id: string;
  competitors: { entity_id: string; role: string }[];
}

describe('min_probability', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let live: string;
  let source: string;
  let games: Game[] = [];
  let next = 0;
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));
  const open: { close(): void }[] = [];

  beforeAll(async () => {
    t = await testApp({ clock });
    ({ http: base, ws: wsBase } = await listen(t));
    live = await t.key({ products: ['live'] });
    source = await t.key({ products: ['source'] });
    const random = seededRandom(55);
    for (let i = 0; i < 5; i++) await createTodayGame(t.db, 'basketball', isoDate(clock.now()), clock.now(), random);
    const list = (await t.app.inject({ url: '/v1/competitions?date=today&sport=basketball&limit=100', headers: auth(live) })).json().data as (Game & { status: string })[];
    games = list.filter((g) => g.status === 'scheduled').map((g) => ({ ...g, competition_id: g.id, id: `basketball_${g.id.split('_').pop()}` }));
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const code = (g: Game, role = 'home') => String(g.competitors.find((c) => c.role === role)?.entity_id.split(':').pop());
  const report = async (g: Game, points = 2, role = 'home') => {
    const key = await t.key({ products: ['report'] });
    const res = await t.app.inject({ method: 'POST', url: '/v1/reports', headers: auth(key), payload: { game_id: g.id, team: code(g, role), points } });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data[0] as { event_id: string | null };
  };
  /** Three fresh keys: a crowd provisional and confirmation, whose probability is below 1. */
  const crowdPlay = async (g: Game, points = 2) => {
    for (let i = 0; i < 3; i++) await report(g, points);
  };
  const officialPlay = async (g: Game, points = 3) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/competitions/${g.competition_id}/plays`,
      headers: auth(source),
      payload: { period: { unit: 'quarter', num: 1, label: 'Q1' }, competitor_id: g.competitors[1].entity_id, event_type: 'three_pointer', points, ts: new Date(clock.now() - 90_000).toISOString() },
    });
    expect(res.statusCode, res.body).toBe(201);
  };
  const ws = async (query: string) => {
    const c = await connect(`${wsBase}/v1/stream${query}`, live);
    open.push(c);
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    return c;
  };
  const scores = (c: StreamClient) => c.events().filter((f) => f.type === 'score');
  const probability = (f: Frame) => (f.confidence as { probability: number }).probability;

  it('the stream sends only events at or above it (WebSocket query); official events (1) always pass', async () => {
    const g = games[next++];
    const all = await ws(`?game=${g.id}`);
    const sure = await ws(`?game=${g.id}&min_probability=0.999`);
    expect(sure.frames[0]).toMatchObject({ type: 'subscribed', min_probability: 0.999 });
    await crowdPlay(g);
    await officialPlay(g);
    await all.until((c) => scores(c).length >= 3, 5000, 'the crowd’s two events and the official one');
    await sure.until((c) => scores(c).length >= 1, 5000, 'the official event');
    expect(scores(all).filter((f) => probability(f) < 1)).toHaveLength(2);
    expect(scores(sure).map(probability)).toEqual([1]);
  });

  it('the same over server-sent events, and on a resume (since)', async () => {
    const g = games[next++];
    const first = await ws(`?game=${g.id}`);
    const last = Number((await t.db.kysely.selectFrom('events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m);
    await crowdPlay(g);
    await officialPlay(g);
    await first.until((c) => scores(c).length >= 3, 5000, 'three events');
    const sse = new SseClient(`${base}/v1/stream?game=${g.id}&min_probability=0.999&since=evt_${String(last).padStart(12, '0')}`, live);
    open.push(sse);
    const deadline = Date.now() + 5000;
    while (!sse.messages.some((m) => m.event === 'score') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    const got = sse.messages.filter((m) => m.event === 'score' && m.data.game_id === g.id);
    expect(got.map((m) => (m.data.confidence as { probability: number }).probability)).toEqual([1]);
  });

  it('a subscribe message raises it mid-stream; the retraction of an event sent before still arrives', async () => {
    const g = games[next++];
    const c = await ws(`?game=${g.id}`);
    // A lone report: a provisional below any sensible threshold, then silence.
    const lone = await report(g, 1);
    await c.until((x) => scores(x).length === 1, 5000, 'the provisional');
    c.send({ op: 'subscribe', games: [g.id], min_probability: 0.999 });
    await c.until((x) => x.frames.some((f) => f.type === 'subscribed' && f.op === 'subscribe'), 5000, 'the answer');
    expect(c.frames.find((f) => f.op === 'subscribe')).toMatchObject({ min_probability: 0.999 });
    await crowdPlay(g, 3);
    clock.advance(91_000);
    await t.services.live.ingest.tick();
    await c.until((x) => x.events().some((f) => f.type === 'score_retracted'), 5000, 'the retraction');
    expect(c.events().find((f) => f.type === 'score_retracted')).toMatchObject({ retracted_id: lone.event_id });
    expect(scores(c)).toHaveLength(1);
  });

  it('refuses a value outside 0..1 with 400 naming it, before the upgrade; a bad subscribe gets an error frame', async () => {
    for (const v of ['1.5', '-0.1', 'high', '', '0.5.5']) {
      const refused = await connect(`${wsBase}/v1/stream?min_probability=${v}`, live).catch((e: { status: number; body: { error: { param: string; type: string } } }) => e);
      expect(refused, v).toMatchObject({ status: 400, body: { error: { type: 'invalid_request', param: 'min_probability' } } });
    }
    const c = await ws('');
    c.send({ op: 'subscribe', sports: ['basketball'], min_probability: 2 });
    await c.until((x) => x.frames.some((f) => f.type === 'error'), 5000, 'the error frame');
    expect(c.frames.find((f) => f.type === 'error')).toMatchObject({ param: 'min_probability' });
  });

  it('a webhook endpoint takes it: below it, no delivery; out of range, 400 naming it and nothing stored', async () => {
    const g = games[next++];
    const call = (method: 'POST' | 'PATCH' | 'GET', url: string, body?: object) => t.app.inject({ method, url, headers: auth(live), ...(body ? { payload: body } : {}) });
    const PUBLIC = 'https://93.184.215.14/hooks/svc';
    const sure = (await call('POST', '/v1/webhooks', { url: PUBLIC, tier: 'confirmed', min_probability: 0.999 })).json().data;
    expect(sure.min_probability).toBe(0.999);
    const every = (await call('POST', '/v1/webhooks', { url: PUBLIC, tier: 'confirmed' })).json().data;
    expect(every.min_probability).toBe(0);
    await crowdPlay(g);
    await officialPlay(g);
    const deliveries = async (id: string) => (await call('GET', `/v1/webhooks/${id}/deliveries?limit=1000`)).json().data as { event_id: string }[];
    const ofGame = async (id: string) => {
      const ids = new Set((await deliveries(id)).map((d) => d.event_id));
      const rows = await t.db.kysely.selectFrom('events').select(['seq', 'probability']).where('game_id', '=', g.id).where('tier', '=', 'confirmed').execute();
      return rows.filter((r) => ids.has(`evt_${String(r.seq).padStart(12, '0')}`)).map((r) => Number(r.probability));
    };
    expect((await ofGame(every.id)).sort()).toEqual([expect.any(Number), 1]);
    expect(await ofGame(sure.id)).toEqual([1]);

    const count = async () => Number((await t.db.kysely.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n);
    const before = await count();
    for (const v of [1.01, -1, '0.5']) expectError(await call('POST', '/v1/webhooks', { url: PUBLIC, tier: 'confirmed', min_probability: v }), 400, 'invalid_request', { param: 'min_probability' });
    expect(await count()).toBe(before);
    expectError(await call('PATCH', `/v1/webhooks/${every.id}`, { min_probability: 7 }), 400, 'invalid_request', { param: 'min_probability' });
    expect((await call('PATCH', `/v1/webhooks/${every.id}`, { min_probability: 0.5 })).json().data.min_probability).toBe(0.5);
  });
});
