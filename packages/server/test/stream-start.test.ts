import { afterAll, describe, expect, it, vi } from 'vitest';
import { EventLog } from '../src/store/events/events.js';
import { listen, testApp, type TestApp } from './helpers.js';
import { connect } from './ws-client.js';

/**
 * The stream's starting point is the store's last seq, read when the node starts. A first read
 * that fails (a busy or briefly unreachable database) must not start the stream from 0: every
 * stored event would then look like a hole and be sent to the clients as if it were live.
 */
describe('the stream starts from the store’s last seq even when the first read of it fails', () => {
  let t: TestApp | null = null;
  afterAll(async () => {
    vi.restoreAllMocks();
    await t?.close();
  });

  it('a client connected after such a start gets the next event only, not the history', async () => {
    const real = EventLog.prototype.lastSeq;
    let failures = 0;
    // The database's answer to the first read is a failure; the ones after it are real.
    vi.spyOn(EventLog.prototype, 'lastSeq').mockImplementation(function (this: EventLog) {
      if (failures++ === 0) return Promise.reject(new Error('Connection terminated due to connection timeout'));
      return real.call(this);
    });
    t = await testApp();
    const { ws } = await listen(t);
    const key = await t.key({ products: ['live'] });
    const head = await real.call(t.services.events);
    expect(head).toBeGreaterThan(1000);
    await new Promise((r) => setTimeout(r, 1_000));
    const client = await connect(`${ws}/v1/stream`, key);
    await client.until((c) => c.frames.length > 0, 5_000, 'subscribed');
    const c = await t.db.kysely.selectFrom('competitions').select(['id', 'n', 'season_id', 'league', 'sport']).where('sport', '=', 'basketball').orderBy('id').executeTakeFirstOrThrow();
    const [added] = await t.services.events.append([
      {
        type: 'score', tier: 'confirmed', game_id: `basketball_${c.n}`, competition_id: c.id, sport: 'basketball', league: c.league, season_id: c.season_id,
        team: 'ZZZ', event_type: 'correction', points: 2, clock: null, ts: new Date().toISOString(), agreement: 1, reporters: 0, latency_ms: 0, probability: 1,
        provisional_id: null, retracted_id: null,
      },
    ]);
    await t.services.bus.publish([added]);
    await client.until((x) => x.events().some((e) => e.id === added.event.id), 5_000, 'the new event');
    await new Promise((r) => setTimeout(r, 300));
    expect(client.events().map((e) => e.id)).toEqual([added.event.id]);
    expect(failures).toBeGreaterThan(1);
    expect(client.closeCode).toBeNull();
    client.close();
  });
});
