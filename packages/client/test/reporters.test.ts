import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, PermissionDeniedError, Svc, type Reporter } from '../src/index.js';
import { liveSvc, type LiveSvc } from './support.js';

/** svc.reporters against a real svc: the list typed and paged, suspend and restore, and their refusals. */
describe('reporters (product admin)', () => {
  let s: LiveSvc;
  let reporterKey: string;
  beforeAll(async () => {
    s = await liveSvc();
    reporterKey = await s.t.key({ products: ['report'] });
  });
  afterAll(() => s.close());

  it('lists, suspends and restores; a suspended reporter’s report is stored with no event', async () => {
    const reporter = new Svc({ apiKey: reporterKey, baseUrl: s.baseUrl, maxRetries: 0 });
    const me = await reporter.me();
    const game = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 3 })).data[2];
    const team = game.competitors[0].entity_id.split(':').pop() ?? '';
    const first = await reporter.reports.create({ game_id: game.id, team, points: 1 });
    expect(first.event_id).toMatch(/^evt_/);
    // Its record appears once a vote of it was judged; a suspension gives it one at once.
    const id = `rep_${Buffer.from(me.id).toString('base64url')}`;
    const suspended: Reporter = await s.svc.reporters.suspend(id);
    expect(suspended).toMatchObject({ id, key_id: me.id, reporter: null, suspended: true, reports: 1 });
    const ignored = await reporter.reports.create({ game_id: game.id, team: game.competitors[1].entity_id.split(':').pop() ?? '', points: 1 });
    expect(ignored.event_id).toBeNull();

    const page = await s.svc.reporters.list({ suspended: 'true', limit: 1 });
    expect(page.data.map((r) => r.id)).toEqual([id]);
    const all: Reporter[] = [];
    for await (const r of s.svc.reporters.list({ key: me.id })) all.push(r);
    expect(all).toHaveLength(1);
    expect(all[0].weight).toBeGreaterThan(0);

    expect((await s.svc.reporters.restore(id)).suspended).toBe(false);
  });

  it('a key’s named reporters: listed with `reporter` set beside the key’s own voice, one suspended and restored by the id the list gives', async () => {
    const appKey = await s.t.key({ products: ['report'] });
    const app = new Svc({ apiKey: appKey, baseUrl: s.baseUrl, maxRetries: 0 });
    const me = await app.me();
    const game = (await s.svc.games.list({ sport: 'basketball', status: 'scheduled', limit: 1 })).data[0];
    const team = game.competitors[0].entity_id.split(':').pop() ?? '';
    expect((await app.reports.create({ game_id: game.id, team, points: 2 })).event_id).toMatch(/^evt_/);
    // Named reporters without a record: they publish nothing alone.
    expect((await app.reports.create({ game_id: game.id, team, points: 3, reporter: 'fan-1' })).event_id).toBeNull();
    expect((await app.reports.create({ game_id: game.id, team, points: 1, reporter: 'fan 2 ⚽' })).event_id).toBeNull();

    const listed: Reporter[] = [];
    for await (const r of s.svc.reporters.list({ key: me.id, limit: 1 })) listed.push(r);
    expect(listed.map((r) => [r.key_id, r.reporter, r.reports, r.suspended])).toEqual([
      [me.id, null, 1, false],
      [me.id, 'fan 2 ⚽', 1, false],
      [me.id, 'fan-1', 1, false],
    ]);
    const fan1 = listed[2];
    expect(fan1.weight).toBe(0.5);
    const suspended = await s.svc.reporters.suspend(fan1.id);
    expect(suspended).toMatchObject({ id: fan1.id, reporter: 'fan-1', suspended: true });
    expect((await s.svc.reporters.list({ key: me.id, suspended: 'true' })).data.map((r) => r.reporter)).toEqual(['fan-1']);
    expect((await s.svc.reporters.restore(fan1.id)).suspended).toBe(false);
  });

  it('an unknown reporter is a NotFoundError; a key without admin a PermissionDeniedError', async () => {
    await expect(s.svc.reporters.suspend('rep_unknown')).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.svc.reporters.restore('rep_unknown')).rejects.toMatchObject({ status: 404, code: 'resource_not_found' });
    const plain = new Svc({ apiKey: reporterKey, baseUrl: s.baseUrl, maxRetries: 0 });
    await expect(plain.reporters.list()).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(plain.reporters.suspend('rep_unknown')).rejects.toMatchObject({ status: 403, code: 'product_not_in_plan' });
  });
});
