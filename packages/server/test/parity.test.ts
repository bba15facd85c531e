// Backtest parity: a simulated game runs through the whole pipeline (HTTP ingestion → consensus →
// event log → stream, webhooks, REST, and the next day the archive export), and every consumer
// sees the same event. A backtest built on the export then replays exactly what live saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../src/domain/clock.js';
import { seededRandom, startSimulator } from '../src/sim/index.js';
import { auth, engines, listen, sleep, testApp, until, type TestApp } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { connect, type StreamClient } from './ws-client.js';

type Json = Record<string, unknown>;

const DAY_MS = 86_400_000;
/** Fields every representation of an event carries: a shared-field check must cover at least these. */
const CORE = ['id', 'type', 'tier', 'game_id', 'team', 'points', 'ts', 'confidence', 'schema'];

/** Asserts that `a` and `b` agree on every field they share, and that they share at least CORE. */
function expectSharedFieldsAgree(what: string, a: Json, b: Json): void {
  const shared = Object.keys(a).filter((k) => k in b);
  expect(shared, `${what}: shared fields`).toEqual(expect.arrayContaining(CORE));
  for (const k of shared) expect(b[k], `${what}: field '${k}' of ${String(a.id)}`).toEqual(a[k]);
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseObject(text: string): Json {
  const v: unknown = JSON.parse(text);
  if (!isObject(v)) throw new Error(`not a JSON object: ${text.slice(0, 80)}`);
  return v;
}

describe.each(engines())('backtest parity (%s)', (engine) => {
  // The service's clock: moved to the next day once the games are over, so the export (the
  // archive serves final competitions before today) can read them.
  let shift = 0;
  const clock: Clock = { now: () => Date.now() + shift, sleep: systemClock.sleep };
  let t: TestApp;
  let rx: Receiver;
  let stream: StreamClient;
  let key: string;
  let base: string;

  beforeAll(async () => {
    t = await testApp({ engine, clock, config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    const addr = await listen(t);
    base = addr.http;
    key = await t.key();
    rx = await startReceiver();
    const ep = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth(key), payload: { url: `${rx.url}/parity`, tier: 'confirmed' } });
    expect(ep.statusCode, ep.body).toBe(201);
    t.services.webhooks.dispatcher.start();
    stream = await connect(`${addr.ws}/v1/stream`, key);
  });
  afterAll(async () => {
    stream.close();
    await t.services.webhooks.dispatcher.stop();
    await rx.close();
    await t.close();
  });

  // 7 s alone on either engine; in the whole suite on two vCPUs up to 45 s on PostgreSQL, whose
  // commits wait behind the other files' databases (docs/testing.md "Long tests").
  it('the stream frame, the webhook body, GET /v1/games/:id/events and the export line agree on every shared field', { timeout: 240_000 }, async () => {
    const sim = await startSimulator({ baseUrl: base, db: t.db, config: t.services.config, speed: 1000, random: seededRandom(11) });
    const games = sim.games();
    try {
      expect(games.map((g) => g.sport).sort()).toEqual(['basketball', 'soccer']);
      await until(() => sim.games().every((g) => g.state === 'final'), 150_000, 'both replays to end');
    } finally {
      await sim.stop();
    }

    for (const g of games) {
      // REST: the game's confirmed events, in sequence order.
      const res = await t.app.inject({ url: `/v1/games/${g.gameId}/events?limit=1000`, headers: auth(key) });
      expect(res.statusCode, res.body).toBe(200);
      const body: unknown = res.json();
      const rest = isObject(body) && Array.isArray(body.data) ? body.data.filter(isObject) : [];
      expect(rest.length, `confirmed events of ${g.gameId}`).toBeGreaterThan(0);
      expect(rest.every((e) => e.tier === 'confirmed')).toBe(true);
      const restIds = rest.map((e) => e.id);

      // Stream: every event of the game as it happened; its confirmed ones are REST's, in the same order.
      await stream.until((c) => c.events().filter((f) => f.game_id === g.gameId && f.tier === 'confirmed').length >= rest.length, 10_000, `stream frames of ${g.gameId}`);
      const frames = stream.events().filter((f) => f.game_id === g.gameId);
      expect(frames.filter((f) => f.tier === 'confirmed').map((f) => f.id)).toEqual(restIds);
      // The whole pipeline ran: each confirmation names a provisional the stream showed first.
      for (const e of rest) {
        const prov = frames.findIndex((f) => f.id === e.provisional_id);
        expect(prov, `provisional of ${String(e.id)} on the stream`).toBeGreaterThanOrEqual(0);
        expect(frames[prov]).toMatchObject({ tier: 'provisional', type: 'score', team: e.team, points: e.points });
        expect(prov).toBeLessThan(frames.findIndex((f) => f.id === e.id));
      }

      // Webhooks: every confirmed event, once, with the wire view of the REST record as its exact body.
      const hooked = () => rx.requests.filter((r) => r.path === '/parity' && parseObject(r.body).game_id === g.gameId);
      await rx.waitFor(() => hooked().length >= rest.length, 15_000, `webhooks of ${g.gameId}`);
      await sleep(200);
      const hooks = hooked();
      expect(hooks.map((r) => r.headers['x-svc-event-id']).sort()).toEqual([...restIds].sort());

      for (const e of rest) {
        const frame = frames.find((f) => f.id === e.id);
        if (!frame) throw new Error(`no frame for ${String(e.id)}`);
        expectSharedFieldsAgree('stream frame vs REST', frame, e);
      }
      for (const h of hooks) {
        const hook = parseObject(h.body);
        const e = rest.find((x) => x.id === hook.id);
        if (!e) throw new Error(`webhook for an event REST does not have: ${String(hook.id)}`);
        const frame = frames.find((f) => f.id === hook.id);
        if (!frame) throw new Error(`no frame for ${String(hook.id)}`);
        expectSharedFieldsAgree('webhook body vs REST', hook, e);
        expectSharedFieldsAgree('webhook body vs stream frame', hook, frame);
        // Byte for byte: the body is the REST record's values, in the wire view's fields.
        expect(h.body).toBe(JSON.stringify(Object.fromEntries(Object.keys(hook).map((k) => [k, e[k]]))));
      }
    }

    // The next day the games are archive: the export of their seasons holds the same events.
    shift = DAY_MS;
    for (const g of games) {
      const comp = await t.app.inject({ url: `/v1/competitions/${g.competitionId}`, headers: auth(key) });
      expect(comp.statusCode, comp.body).toBe(200);
      const c: unknown = comp.json();
      const data = isObject(c) && isObject(c.data) ? c.data : {};
      const ex = await t.app.inject({ url: `/v1/export?league=${String(data.league)}&season=${String(data.season_id)}`, headers: auth(key) });
      expect(ex.statusCode, ex.body).toBe(200);
      expect(ex.headers['content-type']).toMatch(/^application\/x-ndjson/);
      const lines = ex.body.split('\n').filter((l) => l.length > 0);
      const mine = lines.filter((l) => parseObject(l).game_id === g.gameId);

      const res = await t.app.inject({ url: `/v1/games/${g.gameId}/events?limit=1000`, headers: auth(key) });
      expect(res.statusCode, res.body).toBe(200);
      // Byte for byte: the export line is the REST item (the list's items, re-serialised the same way).
      const body: unknown = res.json();
      const rest = isObject(body) && Array.isArray(body.data) ? body.data.filter(isObject) : [];
      expect(mine.map((l) => parseObject(l).id)).toEqual(rest.map((e) => e.id));
      const frames = stream.events().filter((f) => f.game_id === g.gameId);
      for (const [i, line] of mine.entries()) {
        const e = rest[i];
        expect(line).toBe(JSON.stringify(e));
        const parsed = parseObject(line);
        const frame = frames.find((f) => f.id === parsed.id);
        if (!frame) throw new Error(`no frame for ${String(parsed.id)}`);
        expectSharedFieldsAgree('export line vs stream frame', parsed, frame);
        const hook = rx.requests.find((r) => r.path === '/parity' && r.headers['x-svc-event-id'] === parsed.id);
        if (!hook) throw new Error(`no webhook for ${String(parsed.id)}`);
        expectSharedFieldsAgree('export line vs webhook body', parsed, parseObject(hook.body));
      }
    }
  });
});
