import { isoTime, systemClock } from '../src/domain/clock.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog, type StoredEvent } from '../src/store/events/events.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { createWebhooks } from '../src/webhooks/index.js';
import { confirmedGoal, type GameOfEvent } from './event-fixtures.js';
import { auth, engines, testApp, until, type TestApp } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * When the dispatcher looks for due deliveries (docs/webhooks.md "Delivery", "Claims"): its poll
 * slows while claims find nothing, and what it must not be late for does not wait for the poll:
 * a delivery another node wrote (announced by its event on the bus) and a retry it scheduled.
 * The app's own dispatcher is never started here, like an `api` node's; a second one over the same
 * database and bus stands for a worker node.
 */
describe.each(engines())('the webhook dispatcher polls only while it must (%s)', (engine) => {
  let t: TestApp;
  let rx: Receiver;
  let key: string;
  let game: GameOfEvent;

  beforeAll(async () => {
    t = await testApp({ engine, config: { webhookAllowPrivate: true, webhookTimeoutMs: 1000, webhookRetryDelaysS: [0, 1] } });
    rx = await startReceiver();
    key = await t.key();
    const g = (await t.app.inject({ url: '/v1/games?sport=soccer&limit=1', headers: auth(key) })).json().data[0];
    const c = (await t.app.inject({ url: `/v1/competitions/${g.competition_id}`, headers: auth(key) })).json().data;
    game = { id: g.id, competition_id: g.competition_id, league: g.league, season_id: c.season_id, team: String(g.competitors[0].entity_id).split(':').pop() ?? '' };
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  const endpoint = async (path: string): Promise<string> => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth(key), payload: { url: `${rx.url}${path}`, tier: 'confirmed' } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id;
  };
  const drop = (id: string) => t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers: auth(key) });
  const confirmed = (): Promise<StoredEvent[]> => t.services.events.append([confirmedGoal(game, isoTime(Date.now()))]);
  /** Another node's webhooks over the same database and bus; its poll as given. */
  const workerNode = (pollMs: number, idlePollMs: number, onClaim?: (n: number) => void, othersAnnounced?: () => boolean): WebhookDispatcher =>
    createWebhooks({
      db: t.db,
      config: t.services.config,
      clock: systemClock,
      events: new EventLog(t.db),
      bus: t.services.bus,
      dispatcher: { pollMs, idlePollMs, onClaim, ...(othersAnnounced ? { othersAnnounced } : {}) },
    }).dispatcher;

  it('claims less and less often while nothing is due, and at the poll rate again once deliveries come', async () => {
    const claims: { at: number; found: number }[] = [];
    const d = workerNode(20, 160, (found) => claims.push({ at: performance.now(), found }));
    const ep = await endpoint('/ok/poll');
    const started = performance.now();
    d.start();
    try {
      // The poll goes on while nothing is due: eight claims come, however slowly a loaded
      // database answers each, and the next is not started before the last one ends.
      await until(() => claims.length >= 8, 30_000, 'eight claims while nothing is due');
      await sleep(Math.max(0, 1500 - (performance.now() - started)));
      const quiet = claims.length;
      // In its first 1.5 s the 20 ms poll would claim 75 times; doubling to 160 ms about a dozen.
      expect(claims.filter((c) => c.at - started <= 1500).length).toBeLessThanOrEqual(20);
      const gaps = claims.slice(1).map((c, i) => c.at - (claims[i]?.at ?? 0));
      expect(gaps.slice(-3).every((g) => g >= 120)).toBe(true);
      await confirmed();
      d.notify();
      await rx.waitFor(() => rx.requests.some((r) => r.path === '/ok/poll'), 5000, 'the delivery');
      expect(claims.slice(quiet).some((c) => c.found > 0)).toBe(true);
    } finally {
      await d.stop();
      await drop(ep);
    }
  });

  it('a confirmed event on the bus wakes a worker whose poll is a minute away, for a delivery another node wrote', async () => {
    const d = workerNode(60_000, 60_000);
    const ep = await endpoint('/ok/bus');
    d.start();
    try {
      await sleep(300); // its first claim found nothing; the next poll is a minute away
      const stored = await confirmed(); // written by this app, whose own dispatcher never runs
      await t.services.bus.publish(stored);
      await rx.waitFor(() => rx.requests.some((r) => r.path === '/ok/bus'), 10_000, 'the delivery written by the other node');
    } finally {
      await d.stop();
      await drop(ep);
    }
  });

  it('a confirmed event another node appended without a delivery does not wake a worker, one with a delivery does', async () => {
    const claims: number[] = [];
    const d = workerNode(60_000, 60_000, (n) => claims.push(n));
    d.start();
    try {
      await until(() => claims.length >= 1, 5_000, 'the first claim');
      await sleep(200);
      const quiet = claims.length;
      // Appended by the app (another node for this worker), with no endpoint: its batch says so.
      const none = await confirmed();
      expect(none.map((e) => e.webhooks)).toEqual([false]);
      await t.services.bus.publish(none);
      await sleep(500);
      expect(claims.length).toBe(quiet);
      // A batch from a node that does not say (read back from the store, or an older node) wakes it.
      await t.services.bus.publish(none.map(({ webhooks: _, ...e }) => e));
      await until(() => claims.length > quiet, 5_000, 'a claim for the batch that does not say');
    } finally {
      await d.stop();
    }
  });

  it('a confirmed event this node appended wakes its worker once its deliveries are committed, and not again from the bus; none when it has no delivery', async () => {
    const log = new EventLog(t.db);
    const claims: number[] = [];
    const d = createWebhooks({
      db: t.db,
      config: t.services.config,
      clock: systemClock,
      events: log,
      bus: t.services.bus,
      dispatcher: { pollMs: 60_000, idlePollMs: 60_000, onClaim: (n) => claims.push(n) },
    }).dispatcher;
    d.start();
    try {
      await until(() => claims.length >= 1, 5_000, 'the first claim');
      await sleep(200);
      // No endpoint: the outbox wrote nothing, so neither the append nor its batch on the bus wakes the worker.
      const quiet = claims.length;
      await t.services.bus.publish(await log.append([confirmedGoal(game, isoTime(Date.now()))]));
      await sleep(500);
      expect(claims.length).toBe(quiet);
      // With one: the commit wakes it, once; the batch that follows on the bus does not again.
      const ep = await endpoint('/ok/own');
      try {
        await t.services.bus.publish(await log.append([confirmedGoal(game, isoTime(Date.now()))]));
        await rx.waitFor(() => rx.requests.some((r) => r.path === '/ok/own'), 10_000, 'the delivery this node wrote');
        await sleep(300);
        expect(claims.slice(quiet).filter((n) => n > 0)).toEqual([1]);
        expect(claims.length - quiet).toBeLessThanOrEqual(2);
      } finally {
        await drop(ep);
      }
    } finally {
      await d.stop();
    }
  });

  it('keeps to its poll rate while the bus cannot announce other nodes\' deliveries, and slows again once it can', async () => {
    let busUp = false;
    const claims: number[] = [];
    const d = workerNode(20, 2000, () => claims.push(performance.now()), () => busUp);
    const ep = await endpoint('/ok/deaf');
    const started = performance.now();
    d.start();
    try {
      await sleep(2000);
      // Nothing is due, but a delivery another node writes now would not be announced. In the
      // second second the 20 ms poll claims dozens of times (a loaded machine's slower claims
      // included); slowing (20, 40, 80 … ms, up to 2 s) it would claim once.
      expect(claims.filter((at) => at >= started + 1000).length).toBeGreaterThanOrEqual(3);
      // Written by this app, whose own dispatcher never runs, and not published: found by the poll.
      await confirmed();
      const written = Date.now();
      await rx.waitFor(() => rx.requests.some((r) => r.path === '/ok/deaf'), 5000, 'the delivery nobody announced');
      expect((rx.requests.find((r) => r.path === '/ok/deaf')?.at ?? Infinity) - written).toBeLessThan(1000);
      // The bus back: the poll slows again. Doubling from 20 ms is at most 7 claims in 1.5 s (fewer
      // when the empty claims since the delivery already count), against about 50 at 20 ms.
      await sleep(100);
      busUp = true;
      const up = claims.length;
      await sleep(1500);
      expect(claims.length - up).toBeLessThanOrEqual(8);
    } finally {
      await d.stop();
      await drop(ep);
    }
  });

  it('a retry it scheduled goes out on time though its poll is a minute away', async () => {
    const d = workerNode(60_000, 60_000);
    const ep = await endpoint('/status/500/retry');
    d.start();
    try {
      await sleep(300);
      await confirmed();
      d.notify();
      await rx.waitFor(() => rx.requests.filter((r) => r.path === '/status/500/retry').length >= 2, 10_000, 'the retry one second later');
      const [first, second] = rx.requests.filter((r) => r.path === '/status/500/retry');
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(900);
    } finally {
      await d.stop();
      await drop(ep);
    }
  });
});
