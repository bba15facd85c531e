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
 * the stall ends. Then a second stall, under crowd reports sent as it begins (one of them has
 * its write in flight when the server stops): every report answers 202 or 503 within the same
 * bound, none waiting behind another.
 */
const ADMIN = 'svc_test_StallStallStallStallStall0001';
let pgc: OwnPostgres | null = null;
let svc: SvcProcess | null = null;
afterAll(async () => {
  await pgc?.freeze('SIGCONT').catch(() => undefined);
  await svc?.stop();
  await pgc?.remove();
});

interface Game {
  id: string;
  sport: string;
  status: string;
  competitors: { entity_id: string }[];
}

async function timed(url: string, init?: RequestInit): Promise<{ status: number; code: string | null; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  const code = res.status >= 400 ? (JSON.parse(text).error?.code ?? null) : null;
  return { status: res.status, code, ms: performance.now() - started };
}

describe('a stalled PostgreSQL', () => {
  it('answers 503 in bounded time while it stalls, keeps /livez fast, and heals when it resumes; reports too', { timeout: 240_000 }, async () => {
    pgc = await OwnPostgres.start();
    svc = await serveSvc(tmpDir(), { SVC_DATABASE_URL: await pgc.seeded('svc'), SVC_BOOTSTRAP_KEY: ADMIN, SVC_SECRET_KEY: '3c'.repeat(32), SVC_SIMULATOR: 'off' });
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

    // The second stall: crowd reports to today's games, one every 50 ms from a second before it
    // until 2 s into it. (Not during the first: a report that lands is a write, and empties the
    // response cache the first stall reads from.)
    const games = ((await (await fetch(`${svc.base}/v1/games?date=today&limit=1000`, { headers })).json()).data as Game[]).filter(
      (g) => (g.sport === 'soccer' || g.sport === 'basketball') && g.status === 'scheduled',
    );
    expect(games.length).toBeGreaterThan(0);
    const report = async (i: number) => {
      const g = games[i % games.length];
      const body = JSON.stringify({ game_id: g.id, team: g.competitors[0].entity_id.split(':').pop(), points: g.sport === 'soccer' ? 1 : 2 });
      const sentAt = Date.now();
      return { ...(await timed(`${svc?.base}/v1/reports`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })), sentAt };
    };
    let reporting = true;
    const sent: ReturnType<typeof report>[] = [];
    const reports = (async () => {
      for (let i = 0; reporting; i++) {
        sent.push(report(i));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    await pgc.freeze('SIGSTOP');
    const stalledAt = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    reporting = false;
    await reports;
    const answers = (await Promise.all(sent)).filter((a) => a.sentAt >= stalledAt - 500);
    const slowest = Math.max(...answers.map((a) => a.ms));
    console.log(`stall: ${answers.length} reports sent from 0.5 s before the second stall to 2 s into it, ${answers.filter((a) => a.status === 202).length} answered 202; slowest ${slowest.toFixed(0)} ms`);
    expect(answers.length).toBeGreaterThan(20);
    for (const a of answers) expect(a.status === 202 || (a.status === 503 && a.code === 'store_unavailable'), `${a.status} ${a.code}`).toBe(true);
    // 15 s by the design (docs/operations.md "Failures and what svc does"); the margin is a loaded machine's, under the 20 s a client gives it.
    expect(slowest).toBeLessThan(18_000);
    await pgc.freeze('SIGCONT');
    const healBy = Date.now() + 30_000;
    let healed = await report(0);
    while (healed.status !== 202 && Date.now() < healBy) {
      await new Promise((r) => setTimeout(r, 250));
      healed = await report(0);
    }
    expect(healed.status).toBe(202);
  });
});
