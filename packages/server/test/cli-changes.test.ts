import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, listen, testApp, tmpDir, type TestApp } from './helpers.js';
import { runSvc, startSvc } from './process.js';

/** `svc changes` as a real process against a real svc (docs/changes.md). */
describe('svc changes (real processes)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let http: string;
  let key: string;
  let source: string;
  beforeAll(async () => {
    t = await testApp();
    http = (await listen(t)).http;
    key = await t.key();
    source = await t.key({ products: ['source'] });
  });
  afterAll(async () => t.close());

  const postpone = async (id: string) =>
    t.app.inject({ method: 'POST', url: `/v1/competitions/${id}/status`, payload: { status: 'postponed', reason: 'Snow' }, headers: { ...auth(source), 'content-type': 'application/json' } });

  it('prints the feed to its end, then follows it, printing a postponement as it happens', async () => {
    const [a, b] = (await t.app.inject({ url: '/v1/competitions?sport=soccer&date=today&status=scheduled', headers: auth(key) })).json().data as { id: string }[];
    expect((await postpone(a.id)).statusCode).toBe(200);
    const env = { SVC_DATA_DIR: tmpDir() };
    const once = await runSvc(['changes', '--url', http, '--key', key], env);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(new RegExp(`event.created .* scheduled → postponed \\(Snow\\)`));
    expect(once.stdout).toContain(`competition.updated  ${a.id}`);
    const cursor = /cursor (\S+)\n$/.exec(once.stderr)?.[1];
    expect(cursor).toBeTruthy();
    const p = startSvc(['changes', '--follow', '--json', '--since', String(cursor), '--url', http, '--key', key], env);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await postpone(b.id)).statusCode).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!p.written('stdout').includes(b.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    p.signal('SIGINT');
    const { code } = await p.exited;
    expect(code).toBe(0);
    const lines = p.written('stdout').trim().split('\n').map((l) => JSON.parse(l) as { object_id: string; type: string });
    expect(lines.some((l) => l.object_id === b.id && l.type === 'competition.updated')).toBe(true);
    expect(lines.some((l) => l.object_id === a.id)).toBe(false);
  });

  it('refuses bad arguments with one line and exit 2, and a refused key with exit 1', async () => {
    const env = { SVC_DATA_DIR: tmpDir() };
    const bad = await runSvc(['changes', '--types', 'event.deleted', '--url', http, '--key', key], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--types must list/);
    const refused = await runSvc(['changes', '--url', http, '--key', 'svc_test_wrongwrongwrongwrongwrong1'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/401 invalid_api_key/);
  });
});
