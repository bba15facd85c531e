import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, testApp, type TestApp } from './helpers.js';

type Item = Record<string, unknown>;

describe('keyset pagination', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = await t.key();
  });
  afterAll(async () => t.close());

  async function page(url: string): Promise<{ data: Item[]; next_cursor: string | null }> {
    const res = await t.app.inject({ method: 'GET', url, headers: auth(key) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async function walk(url: string, limit: number, between?: (i: number) => Promise<void>): Promise<Item[]> {
    const out: Item[] = [];
    let cursor: string | null = null;
    const sep = url.includes('?') ? '&' : '?';
    for (let i = 0; ; i++) {
      const p = await page(`${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      out.push(...p.data);
      if (!p.next_cursor) return out;
      expect(p.data).toHaveLength(limit);
      cursor = p.next_cursor;
      if (between) await between(i);
    }
  }

  const lists = async () => {
    const game = (await page('/v1/games?league=wc&season=2022&limit=1')).data[0] as { id: string; competition_id: string };
    return [
      '/v1/teams?sport=basketball',
      '/v1/teams?league=wc',
      '/v1/players?team=team:wc:ARG&season=wc_2026',
      '/v1/teams/team:wc:ARG/roster?season=wc_2026',
      '/v1/venues?league=wc',
      '/v1/seasons?league=intl',
      '/v1/competitions?league=wc&season=2014',
      '/v1/games?league=wc&season=2018',
      `/v1/competitions/${game.competition_id}/plays`,
      `/v1/games/${game.id}/events`,
      '/v1/competitions?date=today',
    ];
  };

  it('walks every list with limits 1..7 and finds exactly the unpaginated result', async () => {
    for (const url of await lists()) {
      const all = (await page(`${url}${url.includes('?') ? '&' : '?'}limit=1000`)).data;
      expect(all.length, url).toBeGreaterThan(0);
      for (let limit = 1; limit <= 7; limit++) {
        const walked = await walk(url, limit);
        expect(walked, `${url} limit=${limit}`).toEqual(all);
      }
    }
  });

  it('has no gaps and no duplicates while rows are inserted during the walk', async () => {
    const url = '/v1/competitions?league=wc&season=2022';
    const before = (await page(`${url}&limit=1000`)).data.map((c) => c.id);
    let n = 900_000;
    const insertSome = async (page: number) => {
      // New rows before, inside and after the walked range, on the first pages only: rows
      // landing ahead of the cursor forever would make the walk endless.
      if (page >= 5) return;
      for (const date of ['2022-11-01', '2022-12-01', '2022-12-31']) {
        n += 1;
        await t.db.kysely
          .insertInto('competitions')
          .values({ id: `soccer_wc_${n}`, sport: 'soccer', league: 'wc', season_id: 'wc_2022', n, date, start_time: null, status: 'final', venue_id: null, name: 'inserted', synthetic: 1, source_key: `test:${n}` })
          .execute();
      }
    };
    for (let limit = 1; limit <= 7; limit++) {
      const walked = (await walk(url, limit, insertSome)).map((c) => String(c.id));
      expect(new Set(walked).size, 'duplicates').toBe(walked.length);
      for (const id of before) expect(walked, `gap at ${id}`).toContain(id);
    }
  });
});
