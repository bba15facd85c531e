import { afterAll, describe, expect, it } from 'vitest';
import { OwnPostgres } from './own-postgres.js';
import { serveSvc, type SvcProcess } from './process.js';
import { tmpDir } from './helpers.js';
import { connect } from './ws-client.js';

/**
 * A PostgreSQL that stalls under a running `svc serve`: its processes stopped with SIGSTOP, alive
 * but silent (docs/operations.md, "Failures and what svc does"). A call that needs the database
 * ends in 503 store_unavailable in bounded time (15 s by the connection bounds; asserted with a
 * margin); what needs none goes on: /livez, a read the response cache holds (its key's lookup
 * older than the key cache's 5 s), an open stream and its heartbeats. The node serves again once
 * the stall ends.
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
    // A read the response cache holds once asked twice, and a stream open before the stall.
    const cachedUrl = `${svc.base}/v1/competitions?league=wc&season=2022&limit=50`;
    for (let i = 0; i < 2; i++) expect((await timed(cachedUrl, { headers })).status).toBe(200);
    const stream = await connect(`${svc.base.replace('http://', 'ws://')}/v1/stream`, ADMIN);
    await stream.until((c) => c.frames.length > 0, 5_000, 'subscribed');

    await pgc.freeze('SIGSTOP');
    const frozenAt = Date.now();
    const during = await Promise.all([1, 2, 3, 4].map((i) => read(i)));
    const livez = await timed(`${svc.base}/livez`);
    console.log(`stall: answers ${during.map((a) => `${a.status} ${a.code} in ${a.ms.toFixed(0)} ms`).join(', ')}; /livez ${livez.status} in ${livez.ms.toFixed(0)} ms`);
    for (const a of during) {
      expect([a.status, a.code]).toEqual([503, 'store_unavailable']);
      expect(a.ms).toBeLessThan(25_000);
    }
    expect(livez.status).toBe(200);
    expect(livez.ms).toBeLessThan(1_000);
    // By now the key's lookup is older than its cache's 5 s: it is admitted as it was while the database does not answer.
    expect(Date.now() - frozenAt).toBeGreaterThan(6_000);
    const heartbeatsBefore = stream.frames.filter((f) => f.type === 'heartbeat').length;
    const cached = await timed(cachedUrl, { headers });
    console.log(`stall: the cached read ${cached.status} in ${cached.ms.toFixed(0)} ms; stream open: ${stream.closeCode === null}`);
    expect(cached.status).toBe(200);
    expect(cached.ms).toBeLessThan(5_000);
    await stream.until((c) => c.frames.filter((f) => f.type === 'heartbeat').length > heartbeatsBefore, 12_000, 'a heartbeat during the stall');
    expect(stream.closeCode).toBeNull();

    await pgc.freeze('SIGCONT');
    const deadline = Date.now() + 30_000;
    let after = await read(10);
    while (after.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      after = await read(10);
    }
    expect(after.status).toBe(200);
    expect(stream.closeCode).toBeNull();
    stream.close();
  });
});
