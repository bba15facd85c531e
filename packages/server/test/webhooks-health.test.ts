import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { isoTime } from '../src/domain/clock.js';
import type { Db } from '../src/store/sql/db.js';
import { EventLog } from '../src/store/events/events.js';
import { KeyRepo, principalOf } from '../src/store/accounts/keys.js';
import { createWebhooks } from '../src/webhooks/index.js';
import { confirmedGoal, type GameOfEvent } from './event-fixtures.js';
import { engines, freshDb, ManualClock, testConfig } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

/**
 * A healthy endpoint's last 2xx, as the auto-disable rule reads it (docs/webhooks.md
 * "Auto-disable"): a worker seeing only successes writes it once per hundredth of the rule's
 * window (a minute at most), and a failure is written at once, whatever the window.
 */
describe.each(engines())('a healthy endpoint\'s row (%s)', (engine) => {
  let rx: Receiver;
  const dbs: Db[] = [];

  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    for (const db of dbs) await db.close();
  });

  /**
   * One worker on a database of its own with one endpoint at `path`; `deliver()` appends a
   * confirmed event at the clock's time and sends it.
   */
  async function worker(disableAfterS: number, path: string) {
    const { db } = await freshDb(engine);
    dbs.push(db);
    const c = await db.kysely.selectFrom('competitions').innerJoin('competitors', 'competitors.competition_id', 'competitions.id').selectAll('competitions').select('competitors.entity_id').where('competitions.sport', '=', 'soccer').limit(1).executeTakeFirstOrThrow();
    const game: GameOfEvent = { id: `soccer_${c.n}`, competition_id: c.id, league: c.league, season_id: c.season_id, team: c.entity_id.split(':').pop() ?? 'X' };
    const clock = new ManualClock(Date.parse('2026-11-29T12:00:00Z'));
    const config = testConfig('/tmp', { webhookAllowPrivate: true, webhookDisableAfterS: disableAfterS });
    const events = new EventLog(db);
    const wh = createWebhooks({ db, config, clock, events });
    const { record } = await new KeyRepo(db, config.env, keyPrefix(config.env)).create({ name: path, plan: 'internal', products: ['live'] }, new Date(clock.now()));
    const { endpoint } = await wh.manage.create(principalOf(record), { url: `${rx.url}${path}`, tier: 'confirmed' });
    const row = () => db.kysely.selectFrom('webhook_endpoints').select(['last_success_at', 'failing_since', 'status']).where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    const deliver = async () => {
      await events.append([confirmedGoal(game, isoTime(clock.now()))]);
      expect(await wh.dispatcher.runOnce()).toBe(1);
    };
    return { clock, wh, row, deliver };
  }

  it('is written once a minute by a worker seeing only successes under the 24 h rule', async () => {
    const w = await worker(86_400, '/ok/daily');
    const first = isoTime(w.clock.now());
    await w.deliver();
    expect((await w.row()).last_success_at).toBe(first);
    // Successes 10 s apart for 50 s: the row keeps the first.
    for (let i = 0; i < 5; i++) {
      w.clock.advance(10_000);
      await w.deliver();
    }
    expect((await w.row()).last_success_at).toBe(first);
    // A minute after the write, the next success is written.
    w.clock.advance(10_000);
    await w.deliver();
    expect((await w.row()).last_success_at).toBe(isoTime(w.clock.now()));
    await w.wh.dispatcher.stop();
  });

  it('is written on every success a second apart when the rule\'s window is 100 s, and a failure at once under any window', async () => {
    const w = await worker(100, '/ok/short');
    await w.deliver();
    for (let i = 0; i < 3; i++) {
      w.clock.advance(1_000);
      await w.deliver();
      expect((await w.row()).last_success_at).toBe(isoTime(w.clock.now()));
    }
    await w.wh.dispatcher.stop();

    const daily = await worker(86_400, '/status/500/daily');
    await daily.deliver();
    expect(await daily.row()).toMatchObject({ last_success_at: null, failing_since: isoTime(daily.clock.now()), status: 'enabled' });
    await daily.wh.dispatcher.stop();
  });
});
