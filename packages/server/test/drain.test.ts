import { afterEach, describe, expect, it } from 'vitest';
import { connect } from './ws-client.js';
import { seededDataDir, startSvc, type SvcProcess } from './process.js';

const KEY = 'svc_test_DrainDrainDrainDrainDrain0001';

// Generous deadlines to fail on, not timings: the contract is "exits within 10 s".
const EXIT_DEADLINE_MS = 20_000;

async function exitWithin(p: SvcProcess, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  const r = await Promise.race([p.exited, late]);
  clearTimeout(timer);
  return r;
}

describe('svc serve: SIGTERM drain (real process)', () => {
  let proc: SvcProcess | null = null;
  afterEach(() => {
    proc?.kill('SIGKILL');
    proc = null;
  });

  it('closes a connected stream client with 1001 and exits', async () => {
    proc = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    const port = await proc.port();
    const client = await connect(`ws://127.0.0.1:${port}/v1/stream?sport=soccer`, KEY);
    await client.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    proc.kill('SIGTERM');
    const exit = await exitWithin(proc, EXIT_DEADLINE_MS);
    expect(exit).toEqual({ code: 0, signal: null });
    await client.until((c) => c.closeCode !== null, 5_000, 'close frame');
    expect(client.closeCode).toBe(1001);
  });
});
