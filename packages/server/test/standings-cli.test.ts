import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStandingsArgs, standingsCommand } from '../src/cli/standings.js';
import { UsageError } from '../src/cli/usage.js';
import { listen, testApp, testConfig, type TestApp } from './helpers.js';

const sink = () => {
  let text = '';
  return { write: (s: string) => (text += s), get text() { return text; } };
};

describe('svc standings: the group tables in a terminal, from a real svc over HTTP', () => {
  let t: TestApp;
  let url: string;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    url = (await listen(t)).http;
    key = await t.key({ products: ['archive'] });
  });
  afterAll(async () => t.close());

  it('prints the eight 2022 groups as aligned tables with team names', async () => {
    const out = sink();
    const err = sink();
    const code = await standingsCommand(parseStandingsArgs(['--league', 'wc', '--season', '2022', '--url', url, '--key', key], testConfig(t.dataDir), {}), out, err);
    expect(err.text).toBe('');
    expect(code).toBe(0);
    const blocks = out.text.trim().split('\n\n');
    expect(blocks).toHaveLength(9); // eight groups and the footer
    const groupC = blocks[2].split('\n');
    expect(groupC[0]).toMatch(/^#\s+Group C\s+P\s+W\s+D\s+L\s+GF\s+GA\s+GD\s+Pts$/);
    expect(groupC[1]).toMatch(/^1\s+Argentina\s+3\s+2\s+0\s+1\s+5\s+2\s+\+3\s+6$/);
    expect(groupC[4]).toMatch(/^4\s+Saudi Arabia\s+3\s+1\s+0\s+2\s+3\s+5\s+-2\s+3$/);
    // Aligned: every line of a table ends its last column at the same place.
    for (const block of blocks.slice(0, 8)) {
      const lines = block.split('\n');
      expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    }
    expect(blocks[8]).toMatch(/^as of \d{4}-/);
  });

  it('a tennis league is one line on stderr and exit 1; a missing --league is a usage error', async () => {
    const out = sink();
    const err = sink();
    expect(await standingsCommand(parseStandingsArgs(['--league', 'stt', '--url', url, '--key', key], testConfig(t.dataDir), {}), out, err)).toBe(1);
    expect(err.text).toMatch(/^svc standings: 400 standings_unavailable: .+\n$/);
    expect(() => parseStandingsArgs([], testConfig(t.dataDir), {})).toThrow(UsageError);
    expect(() => parseStandingsArgs(['--league', 'wc', '--tier', 'rumour', '--key', 'k'], testConfig(t.dataDir), {})).toThrow(UsageError);
  });
});
