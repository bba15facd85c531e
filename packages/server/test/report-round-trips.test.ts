import type { ReportResult } from '@svc/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBus } from '../src/bus/bus.js';
import { isoDate, isoTime, ManualClock } from '../src/domain/clock.js';
import { PLANS } from '../src/domain/plans.js';
import type { Principal } from '../src/domain/scopes.js';
import { createLive, type Live } from '../src/live/index.js';
import { InProcessNetwork } from '../src/live/router.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import { EventLog } from '../src/store/events/events.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { DeliveryQueue } from '../src/store/webhooks/deliveries.js';
import { outboxHook } from '../src/webhooks/outbox.js';
import { engines, freshDb } from './helpers.js';
import { PgTripCounter } from './pg-trip-counter.js';

/**
 * What a report and a webhook claim cost in round trips to PostgreSQL, where each one is a wait
 * of the reporter's or the worker's (docs/architecture.md "Hot writes"): counted by a relay in
 * front of the database that sees every message the server answers. A node of a cluster (its
 * writes fenced by the game's lease and the reporters' track records) with one webhook endpoint.
 */
describe.each(engines().filter((e) => e === 'postgres'))('round trips to the database (%s)', (engine) => {
  let db: Db;
  let relay: PgTripCounter;
  let live: Live;
  let woken = 0;
  let endpointKey = '';
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));
  const reporter = (i: number): Principal => ({ keyId: `trips_reporter_${i}`, name: `r${i}`, environment: 'sandbox', plan: PLANS.internal, products: ['report'], sports: null, leagues: null });
  let play: { game_id: string; team: string };

  beforeAll(async () => {
    const fresh = await freshDb(engine);
    await fresh.db.close();
    const url = fresh.databaseUrl ?? '';
    relay = await PgTripCounter.start(Number(new URL(url).port || 5432), new URL(url).hostname);
    db = await openDb({ dataDir: fresh.dataDir, databaseUrl: relay.urlOf(url) });
    const log = new EventLog(db);
    log.onAppend(outboxHook(clock, () => (woken += 1)));
    live = createLive(db, log, new LocalBus(), clock, { leaseMs: 60_000, nodeId: 'trips', router: new InProcessNetwork().router('trips') });
    const { record } = await new KeyRepo(db, 'sandbox', 'svc_test_').create({ name: 'hooks', plan: 'internal', products: ['live'], sports: null, leagues: null }, new Date(clock.now()));
    endpointKey = record.id;
    const at = isoTime(clock.now());
    await db.kysely
      .insertInto('webhook_endpoints')
      .values({
        id: 'we_round_trips', key_id: endpointKey, url: 'http://127.0.0.1:9/hook', description: null, sports: null, types: null, tier: 'confirmed', status: 'enabled',
        disabled_reason: null, disabled_at: null, secret: 'not used', previous_secret: null, previous_secret_until: null, last_success_at: null, failing_since: null, created_at: at, updated_at: at,
      })
      .execute();
    const g = await db.kysely.selectFrom('competitions').select(['id', 'sport', 'n']).where('sport', '=', 'basketball').where('date', '=', isoDate(clock.now())).where('status', '!=', 'final').executeTakeFirstOrThrow();
    const team = await db.kysely.selectFrom('competitors').select('entity_id').where('competition_id', '=', g.id).executeTakeFirstOrThrow();
    play = { game_id: `${g.sport}_${g.n}`, team: team.entity_id.split(':').pop() ?? '' };
  });
  afterAll(async () => {
    await live?.ingest.close();
    await db?.close();
    await relay?.close();
  });

  it('a report is one round trip, the one that confirms a play too: its track records and webhook deliveries go in the same message', async () => {
    const report = (r: number, points: number, agoMs: number) => live.ingest.submit(reporter(r), [{ ...play, points, observed_at: new Date(clock.now() - agoMs).toISOString() }], false);
    // The game's lease and state and each reporter's record are read once, then kept: each reports a play of its own first.
    for (const r of [0, 1, 2]) await report(r, r + 1, 60_000);
    const competitionChanges = async (id: string) => (await db.kysely.selectFrom('changes').select('seq').where('object_id', '=', id).where('type', '=', 'competition.updated').execute()).length;
    const gameRow = await db.kysely.selectFrom('competitions').select('id').where('sport', '=', 'basketball').where('n', '=', Number(play.game_id.split('_').pop())).executeTakeFirstOrThrow();
    const changesBefore = await competitionChanges(gameRow.id);
    const trips: number[] = [];
    const answers: ReportResult[] = [];
    for (const r of [0, 1, 2]) {
      trips.push(await relay.count(async () => answers.push(...(await report(r, 2, 1000)))));
    }
    expect(answers.map((a) => a.tier)).toEqual(['provisional', 'provisional', 'confirmed']);
    // No official source covers this game, so the confirmation also moves the crowd's own score
    // (docs/corrections.md "The crowd's own games"): the score's update and its change row travel
    // in the same message, so that report is one round trip too.
    expect(trips).toEqual([1, 1, 1]);
    // What the confirming report's one message carried is stored: the three track records moved
    // once each, and the confirmed event's delivery names it.
    const records = await db.kysely.selectFrom('reporters').selectAll().where('voter', 'in', [0, 1, 2].map((r) => reporter(r).keyId)).orderBy('voter').execute();
    expect(records.map((r) => [r.agreed, r.disagreed])).toEqual([[1, 0], [1, 0], [1, 0]]);
    const deliveries = await db.kysely.selectFrom('webhook_deliveries').select(['event_id', 'event_seq', 'status']).where('endpoint_id', '=', 'we_round_trips').execute();
    expect(deliveries.map((d) => ({ ...d, event_seq: Number(d.event_seq) }))).toEqual([{ event_id: answers[2].event_id, event_seq: Number(answers[2].event_id?.slice(4)), status: 'pending' }]);
    // The worker was woken once, after the commit, for the one delivery.
    expect(woken).toBe(1);
    // The crowd's own score moved by the confirmed play, with the competition's change row.
    const competitionId = gameRow;
    const score = await db.kysely.selectFrom('competitors').select('score').where('competition_id', '=', competitionId.id).where('entity_id', 'like', `%:${play.team}`).executeTakeFirstOrThrow();
    expect(score.score).toBe(2);
    expect(await competitionChanges(competitionId.id)).toBe(changesBefore + 1);
  });

  it('a webhook claim is one round trip, whether it finds deliveries or not', async () => {
    const queue = new DeliveryQueue(db);
    const claim = () => queue.claim({ now: clock.now() + 1000, leaseMs: 30_000, limit: 10, cap: 2, busy: new Map([['we_other', 2]]), scan: 64 });
    let first: Awaited<ReturnType<typeof claim>> = [];
    expect(await relay.count(async () => (first = await claim()))).toBe(1);
    expect(first.map((j) => j.endpoint_id)).toEqual(['we_round_trips']);
    expect(await relay.count(async () => expect(await claim()).toEqual([]))).toBe(1);
  });
});
