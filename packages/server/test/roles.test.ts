import { afterEach, describe, expect, it } from 'vitest';
import { startBackground } from '../src/process/worker.js';
import { ManualClock, auth, testApp, until, type TestApp } from './helpers.js';

// Consensus state lives in the node that took the reports. With the consensus tick only on
// worker nodes, a provisional posted to an api node was never retracted (nor re-checked).
describe('background duties by role', () => {
  let t: TestApp | null = null;
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await stop?.();
    await t?.close();
    stop = null;
    t = null;
  });

  const provisionalOnFreshNode = async (role: 'api' | 'worker' | 'all') => {
    const clock = new ManualClock(Date.now());
    const app = await testApp({ clock, config: { role } });
    t = app;
    const key = await app.key();
    const games = (await app.app.inject({ url: '/v1/games?date=today&sport=basketball&limit=1', headers: auth(key) })).json().data as { id: string; competitors: { entity_id: string }[] }[];
    const game = games[0];
    const res = await app.app.inject({
      method: 'POST',
      url: '/v1/reports',
      headers: { ...auth(key), 'content-type': 'application/json' },
      payload: JSON.stringify({ game_id: game.id, team: game.competitors[0].entity_id.split(':').pop(), points: 2 }),
    });
    expect(res.statusCode).toBe(202);
    const provisional: string = res.json().data[0].event_id;
    return { app, clock, provisional };
  };

  /** The score_retracted event naming `provisional`, read from the log (REST lists confirmed events only). */
  const retractionOf = (app: TestApp, provisional: string) =>
    app.db.kysely.selectFrom('events').select('seq').where('type', '=', 'score_retracted').where('retracted_id', '=', provisional).executeTakeFirst();

  for (const role of ['api', 'worker', 'all'] as const) {
    it(`a node with role ${role} retracts the provisionals it published`, async () => {
      const { app, clock, provisional } = await provisionalOnFreshNode(role);
      stop = startBackground(role, app.services, app.app.log, 20);
      clock.advance(91_000);
      await until(async () => (await retractionOf(app, provisional)) !== undefined, 5000, 'score_retracted');
    });
  }

  for (const [role, delivers] of [['api', false], ['worker', true], ['all', true]] as const) {
    it(`${delivers ? 'delivers' : 'does not deliver'} webhooks on a node with role ${role}`, async () => {
      const app = await testApp({ config: { role } });
      t = app;
      stop = startBackground(role, app.services, app.app.log, 20);
      expect(app.services.webhooks.dispatcher.running).toBe(delivers);
    });
  }
});
