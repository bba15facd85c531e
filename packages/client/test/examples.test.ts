import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../server/test/helpers.js';
import { freePort, goalPlays, liveSvc, ROOT, type LiveSvc } from './support.js';

/** Runs an example as `npm run example:*` does, collecting its output. */
function example(name: string, env: Record<string, string>): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', `packages/client/examples/${name}.ts`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, exited: new Promise((r) => child.once('exit', r)) };
}

describe('examples run against a real svc', () => {
  let s: LiveSvc;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    s = await liveSvc({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    s.t.services.webhooks.dispatcher.start();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await s.t.services.webhooks.dispatcher.stop();
    await s.close();
  });

  const scheduled = async (i: number) => (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 10 })).data[i];

  it('scoreboard prints each event with the running score', async () => {
    const run = example('scoreboard', { SVC_API_KEY: s.key, SVC_BASE_URL: s.baseUrl, SPORTS: 'soccer', MAX_EVENTS: '2' });
    children.push(run.child);
    await until(() => run.out().includes('subscribed to soccer'), 30_000, `subscribed (${run.out()})`);
    const g = await scheduled(5);
    const team = g.competitors[0].entity_id.split(':').pop();
    await s.svc.plays.create(g.competition_id, goalPlays(g.competitors[0].entity_id, 2, Date.now()));
    expect(await run.exited).toBe(0);
    const lines = run.out().trim().split('\n').filter((l) => l.includes(g.id));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`${team} \\+1 .*\\|  ${team} 2$`));
  });

  it('webhook receiver registers itself, verifies a delivery and rejects a forged one', async () => {
    const port = await freePort();
    const run = example('webhook-receiver', { SVC_API_KEY: s.key, SVC_BASE_URL: s.baseUrl, PORT: String(port), MAX_EVENTS: '2' });
    children.push(run.child);
    await until(() => /registered we_/.test(run.out()) && /test send: delivered/.test(run.out()), 30_000, `registered (${run.out()})`);
    const forged = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{"id":"evt_1"}', headers: { 'x-svc-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` } });
    expect(forged.status).toBe(400);
    const g = await scheduled(6);
    await s.svc.plays.create(g.competition_id, goalPlays(g.competitors[0].entity_id, 2, Date.now()));
    expect(await run.exited).toBe(0);
    expect(run.out()).toMatch(/rejected: webhook signature verification failed: signature_mismatch/);
    expect(run.out().match(/^verified test event evt_test_/gm)?.length).toBe(1);
    expect(run.out().match(/^verified evt_\d+: /gm)?.length).toBe(2);
    expect(run.out()).toMatch(new RegExp(`verified evt_\\d+: ${g.id} `));
  });
});
