import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellWidth, printable } from '../src/cli/cells.js';
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

  it('shows the reporters a key names: a name is one printable cell whatever it holds, and the columns stay aligned', async () => {
    const app = await t.key({ products: ['report'] });
    const appId = (await t.app.inject({ url: '/v1/me', headers: auth(app) })).json().data.id as string;
    const viewerGames = (await t.app.inject({ url: '/v1/games?date=today&sport=basketball&status=scheduled&limit=1', headers: auth(viewer) })).json().data as { id: string; competitors: { entity_id: string }[] }[];
    const g = viewerGames[0];
    // A name is opaque to svc: a line break and a terminal escape sequence are allowed in it, and so are wide characters.
    const names = ['fan-8312', 'evil\n\u001b[2Jgone', '球迷一号'];
    for (const reporter of names) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/reports', payload: JSON.stringify({ game_id: g.id, team: g.competitors[0].entity_id.split(':').pop(), points: 1, reporter }), headers: { ...auth(app), 'content-type': 'application/json' } });
      expect(res.statusCode, res.body).toBe(202);
    }
    const r = await run(['list', '--key-id', appId]);
    expect(r).toMatchObject({ code: 0, err: '' });
    const lines = r.out.trimEnd().split('\n');
    // A header and one line per reporter: the name's line break does not start a line of its own.
    expect(lines).toHaveLength(1 + names.length);
    expect(r.out).not.toContain('\u001b');
    const byId = new Map(lines.slice(1).map((l) => [l.split(' ')[0], l]));
    expect(byId.get(reporterIdOf(`${appId}/fan-8312`))).toContain(' fan-8312 ');
    expect(byId.get(reporterIdOf(`${appId}/${names[1]}`))).toContain(' evil\\n\\u001b[2Jgone ');
    expect(byId.get(reporterIdOf(`${appId}/球迷一号`))).toContain(' 球迷一号 ');
    // Aligned as a terminal shows them: the weight column starts at the same column on every line (a CJK character takes two).
    const columnOf = (line: string, cell: string) => {
      const at = line.indexOf(cell);
      return [...line.slice(0, at)].reduce((w, ch) => w + (/\p{Script=Han}/u.test(ch) ? 2 : 1), 0);
    };
    const weightAt = lines.slice(1).map((l) => columnOf(l, '0.500'));
    expect(new Set([columnOf(lines[0], 'WEIGHT') + 'WEIGHT'.length - '0.500'.length, ...weightAt]).size).toBe(1);

    const id = reporterIdOf(`${appId}/${names[1]}`);
    const s = await run(['suspend', id]);
    expect(s).toMatchObject({ code: 0, err: '' });
    expect(s.out).toBe(`Suspended ${id} (${appId} / evil\\n\\u001b[2Jgone): its reports count for nothing.\n`);
    expect((await run(['restore', id])).code).toBe(0);
    // --json keeps the name as it is.
    expect(JSON.parse((await run(['list', '--key-id', appId, '--json'])).out).map((x: { reporter: string }) => x.reporter)).toEqual([...names].sort());
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

describe('a terminal cell (cli/cells.ts)', () => {
  it('shows what would drive or break the terminal as escapes, and nothing else', () => {
    expect(printable('fan 8312 — Zoë')).toBe('fan 8312 — Zoë');
    expect(printable('a\nb\tc\r')).toBe('a\\nb\\tc\\r');
    expect(printable('\u001b[31mred\u0007')).toBe('\\u001b[31mred\\u0007');
    // A right-to-left override would reverse the rest of the line; a lone surrogate prints as nothing readable.
    expect(printable('abc\u202Edcb')).toBe('abc\\u202edcb');
    expect(printable('x\uD800y')).toBe('x\\ud800y');
    expect(printable('line\u2028sep\u0085')).toBe('line\\u2028sep\\u0085');
  });

  it('counts the columns a terminal gives: wide scripts and emoji two, combining marks none', () => {
    expect(cellWidth('abc')).toBe(3);
    expect(cellWidth('球迷一号')).toBe(8);
    expect(cellWidth('팬')).toBe(2);
    expect(cellWidth('ＡＢ')).toBe(4);
    expect(cellWidth('e\u0301')).toBe(1);
    expect(cellWidth('⚽')).toBe(2);
    expect(cellWidth('👍🏽')).toBe(2);
    expect(cellWidth('❤️')).toBe(2);
    expect(cellWidth('')).toBe(0);
  });
});
