import { afterAll, describe, expect, it } from 'vitest';
import { OwnPostgres } from './own-postgres.js';
import { serveSvc, type SvcProcess } from './process.js';
import { tmpDir } from './helpers.js';

/**
 * A PostgreSQL that stalls under a running `svc serve`: its processes stopped with SIGSTOP, alive
 * but silent (docs/operations.md, "Failures and what svc does"). A call that needs the database
 * ends in 503 store_unavailable in bounded time (15 s by the connection bounds; asserted with a
 * margin), /livez stays fast, and the node serves again once the stall ends.
 */
const ADMIN = 'svc_test_StallStallStallStallStall0001';
let pgc: OwnPostgres | null = null;
let svc: SvcProcess | null = null;
afterAll(async () => {
  await pgc?.freeze('SIGCONT').catch(() => undefined);
  await svc?.stop();
  await pgc?.remove();
});

async function timed(url: string, init?: RequestInit): Promise<{ status: number; code: string | null; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  const code = res.status >= 400 ? (JSON.parse(text).error?.code ?? null) : null;
  return { status: res.status, code, ms: performance.now() - started };
}

describe('a stalled PostgreSQL', () => {
  it('answers 503 in bounded time while it stalls, keeps /livez fast, and heals when it resumes', { timeout: 240_000 }, async () => {
    pgc = await OwnPostgres.start();
    svc = await serveSvc(tmpDir(), { SVC_DATABASE_URL: await pgc.url('svc'), SVC_BOOTSTRAP_KEY: ADMIN, SVC_SECRET_KEY: '3c'.repeat(32), SVC_SIMULATOR: 'off' });
    const headers = { authorization: `Bearer ${ADMIN}` };
    // A read the response cache cannot answer: a new cursor-less filter each time.
    const read = (i: number) => timed(`${svc?.base}/v1/competitions?league=wc&season=2022&limit=${i + 1}`, { headers });
    expect((await read(0)).status).toBe(200);

    await pgc.freeze('SIGSTOP');
    const during = await Promise.all([1, 2, 3, 4].map((i) => read(i)));
    const livez = await timed(`${svc.base}/livez`);
    console.log(`stall: answers ${during.map((a) => `${a.status} ${a.code} in ${a.ms.toFixed(0)} ms`).join(', ')}; /livez ${livez.status} in ${livez.ms.toFixed(0)} ms`);
    for (const a of during) {
      expect([a.status, a.code]).toEqual([503, 'store_unavailable']);
      expect(a.ms).toBeLessThan(25_000);
    }
    expect(livez.status).toBe(200);
    expect(livez.ms).toBeLessThan(1_000);

    await pgc.freeze('SIGCONT');
    const deadline = Date.now() + 30_000;
    let after = await read(10);
    while (after.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      after = await read(10);
    }
    expect(after.status).toBe(200);
  });
});
