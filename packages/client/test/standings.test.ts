import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, PermissionDeniedError, Svc, type BoxScore, type Leader, type Standings } from '../src/index.js';
import { liveSvc, type LiveSvc } from './support.js';

describe('standings, box scores, leaders and player stats through the client, against a real svc', () => {
  let s: LiveSvc;
  beforeAll(async () => {
    s = await liveSvc();
  });
  afterAll(() => s.close());

  it('standings.list returns the tables with as_of; leaders.list pages; competitions.boxscore and players.stats are typed records', async () => {
    const standings: Standings = await s.svc.standings.list({ league: 'wc', season: '2022' });
    expect(standings.data.map((t) => t.group)).toHaveLength(8);
    // FIFA's published Group C: Argentina, Poland, Mexico, Saudi Arabia.
    expect(standings.data[2].rows.map((r) => r.entity_id)).toEqual(['team:wc:ARG', 'team:wc:POL', 'team:wc:MEX', 'team:wc:KSA']);
    expect(typeof standings.as_of).toBe('string');

    const leaders: Leader[] = [];
    for await (const l of s.svc.leaders.list({ league: 'wc', season: '2022', limit: 2 })) {
      leaders.push(l);
      if (leaders.length === 4) break;
    }
    expect(leaders.map((l) => [l.rank, l.value])).toEqual([
      [1, 8],
      [2, 7],
      [3, 4],
      [3, 4],
    ]);

    const box: BoxScore = await s.svc.competitions.boxscore('soccer_wc_21728');
    expect(box.winner).toBe('team:wc:ARG');
    expect(box.competitors.map((c) => c.shootout)).toEqual([4, 2]);

    // Messi 2022: seven goals, four of them penalties (Saudi Arabia, Netherlands, Croatia, the final).
    const stats = await s.svc.players.stats('player:wc:lionel-messi', { season: '2022' });
    expect(stats.data).toEqual([{ league: 'wc', season: '2022', competitor_id: 'team:wc:ARG', points: 7, by_type: { goal: 3, penalty_goal: 4 } }]);
  });

  it('errors come back as the typed classes: a tennis league, a key without the products', async () => {
    const err = await s.svc.standings.list({ league: 'stt' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ code: 'standings_unavailable', param: 'league' });
    const reportOnly = new Svc({ apiKey: await s.t.key({ products: ['report'] }), baseUrl: s.baseUrl, maxRetries: 0 });
    await expect(reportOnly.leaders.list({ league: 'wc' })).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});
