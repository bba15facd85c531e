import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom, startSimulator, type Simulator } from '../src/sim/index.js';
import { listen, testApp, until, type TestApp } from './helpers.js';
import { connect, type StreamClient } from './ws-client.js';

/** The simulator's disruptions (docs/schedule.md), turned on here with short timings. */
describe('simulator disruptions', () => {
  let t: TestApp;
  let sim: Simulator | undefined;
  let stream: StreamClient;
  beforeAll(async () => {
    t = await testApp();
    const { http, ws } = await listen(t);
    stream = await connect(`${ws}/v1/stream?types=status`, await t.key({ products: ['live'] }));
    sim = await startSimulator({
      baseUrl: http,
      db: t.db,
      config: t.services.config,
      speed: 20,
      random: seededRandom(41),
      intervalMs: 3_600_000,
      disruptions: { firstMs: 300, everyMs: 1500, holdMs: 800 },
    });
  });
  afterAll(async () => {
    stream.close();
    await sim?.stop();
    await t.close();
  });

  it('are off unless turned on: the test config says so', () => {
    expect(t.services.config.simulatorDisruptions).toBe(false);
  });

  it('postpone an upcoming game and schedule it again, and suspend a live game and resume it, as status events on the stream', async () => {
    const seen = (status: string, previous: string) => stream.frames.some((f) => f.type === 'status' && f.status === status && f.previous_status === previous);
    await until(() => seen('postponed', 'scheduled') && seen('scheduled', 'postponed') && seen('suspended', 'live') && seen('live', 'suspended'), 20_000, 'a postponement and a suspension, each undone');
    const postponed = stream.frames.find((f) => f.type === 'status' && f.status === 'postponed');
    expect(typeof postponed?.reason).toBe('string');
    const rescheduled = stream.frames.find((f) => f.type === 'status' && f.status === 'scheduled' && f.game_id === postponed?.game_id);
    // A week after the first announced start, which the competition keeps.
    expect(Date.parse(String(rescheduled?.start_time)) - Date.parse(String(postponed?.start_time))).toBe(7 * 86_400_000);
  });
});
