import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReportersArgs, reportersCommand } from '../src/cli/reporters.js';
import { UsageError } from '../src/cli/usage.js';
import { isoDate } from '../src/domain/clock.js';
import { reporterIdOf } from '../src/domain/consensus/reporter-ids.js';
import { auth, listen, ManualClock, testApp, testConfig, type TestApp } from './helpers.js';

const sink = () => {
  let text = '';
  return { write: (s: string) => (text += s), get text() { return text; } };
};

/** `svc reporters list|suspend|restore` against a real svc over HTTP (docs/reporters.md "From a terminal"). */
describe('svc reporters: the crowd in a terminal', () => {
  let t: TestApp;
  let url: string;
  let admin: string;
  let viewer: string;
  const ids: string[] = [];
  const clock = new ManualClock(Date.parse(`${isoDate(Date.now())}T12:00:00.000Z`));
  beforeAll(async () => {
    t = await testApp({ clock });
    url = (await listen(t)).http;
    admin = await t.key({ products: ['admin'] });
    viewer = await t.key({ products: ['live'] });
    const games = (await t.app.inject({ url: '/v1/games?date=today&sport=soccer&status=scheduled&limit=10', headers: auth(viewer) })).json().data as { id: string; competitors: { entity_id: string }[] }[];
    const keys = [await t.key({ products: ['report'] }), await t.key({ products: ['report'] })];
    for (const k of keys) ids.push((await t.app.inject({ url: '/v1/me', headers: auth(k) })).json().data.id);
    // The first reports one goal; the second three that nobody backs: retracted, flagged.
    const team = (g: (typeof games)[number]) => String(g.competitors[0].entity_id.split(':').pop());
    const report = (k: string, g: (typeof games)[number]) =>
      t.app.inject({ method: 'POST', url: '/v1/reports', payload: JSON.stringify({ game_id: g.id, team: team(g), points: 1 }), headers: { ...auth(k), 'content-type': 'application/json' } });
    await report(keys[0], games[0]);
    for (const g of games.slice(1, 4)) await report(keys[1], g);
    clock.advance(91_000);
    await t.services.live.ingest.tick();
  });
  afterAll(async () => t.close());

  const run = async (argv: string[], key = admin) => {
    const out = sink();
    const err = sink();
    const code = await reportersCommand(parseReportersArgs([...argv, '--url', url, '--key', key], testConfig(t.dataDir), {}), out, err);
    return { code, out: out.text, err: err.text };
  };

  it('lists reporters as an aligned table, flagged first; --json prints the records', async () => {
    const r = await run(['list']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0].split(/\s{2,}/)).toEqual(['ID', 'KEY', 'REPORTER', 'WEIGHT', 'REPORTS', 'AGREED', 'DISAGREED', 'OFFICIAL+', 'OFFICIAL-', 'FLAG', 'STATUS', 'LAST REPORT']);
    expect(lines).toHaveLength(3);
    expect(lines[1].split(/\s+/)).toEqual([reporterIdOf(ids[1]), ids[1], '(key)', '0.200', '3', '0', '3', '0', '0', 'flagged', 'active', expect.stringMatching(/^\d{4}-/)]);
    expect(lines[2].split(/\s+/).slice(0, 7)).toEqual([reporterIdOf(ids[0]), ids[0], '(key)', '0.333', '1', '0', '1']);
    // Aligned: each column starts at the same place on every line.
    const start = (line: string, cell: string) => line.indexOf(cell);
    expect(start(lines[1], '0.200')).toBe(start(lines[2], '0.333'));
    expect(start(lines[0], 'FLAG')).toBe(start(lines[1], 'flagged'));

    const json = await run(['list', '--flagged', '--json']);
    expect(JSON.parse(json.out)).toEqual([expect.objectContaining({ id: reporterIdOf(ids[1]), flagged: true })]);
    expect(JSON.parse((await run(['list', '--key-id', ids[0], '--json'])).out).map((x: { key_id: string }) => x.key_id)).toEqual([ids[0]]);
  });

  it('suspends and restores by id, and lists the suspended', async () => {
    const id = reporterIdOf(ids[1]);
    const s = await run(['suspend', id]);
    expect(s).toMatchObject({ code: 0, err: '' });
    expect(s.out).toBe(`Suspended ${id} (${ids[1]}): its reports count for nothing.\n`);
    const listed = await run(['list', '--suspended']);
    expect(listed.out.trimEnd().split('\n')).toHaveLength(2);
    expect(listed.out).toContain('suspended');
    const back = await run(['restore', id, '--json']);
    expect(JSON.parse(back.out)).toMatchObject({ id, suspended: false });
    expect((await run(['list', '--suspended'])).out).toBe('No reporters match.\n');
  });

  it('says what went wrong in one line: an unknown reporter, a key without admin, a bad command line', async () => {
    const unknown = await run(['suspend', reporterIdOf('key_0000000000000000')]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^svc reporters suspend: 404 resource_not_found: .+\n$/);
    const refused = await run(['list'], viewer);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^svc reporters list: 403 product_not_in_plan: .+svc keys create --name ops --products admin\)\n$/);
    const config = testConfig(t.dataDir);
    for (const argv of [[], ['ban'], ['suspend'], ['suspend', 'key_abc'], ['list', '--flaged'], ['list', '--key-id', 'bob'], ['restore', 'rep_a', 'rep_b']]) {
      expect(() => parseReportersArgs([...argv, '--key', 'k'], config, {}), argv.join(' ')).toThrow(UsageError);
    }
  });
});
