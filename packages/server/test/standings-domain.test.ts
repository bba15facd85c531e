import { describe, expect, it } from 'vitest';
import { boxScore, leaders, liveScore, playerTotals, standings, type GameResult, type PlayFact, type SeasonPlay } from '../src/domain/standings/index.js';

/** Hand-made seasons for the rules of domain/standings/README.md: each case is built so one step decides it. */
let n = 0;
const game = (home: string, hs: number, as: number, away: string, opts: { group?: string | null; status?: string } = {}): GameResult => ({
  id: `g${++n}`,
  group: opts.group === undefined ? 'Group A' : opts.group,
  status: opts.status ?? 'final',
  sides: [
    { entity_id: home, score: hs },
    { entity_id: away, score: as },
  ],
});
const order = (games: GameResult[], sport: 'soccer' | 'basketball' = 'soccer'): string[] => standings(sport, games)[0].rows.map((r) => r.entity_id);

describe('soccer tables: every tiebreak step', () => {
  it('points first: 3 a win, 1 a draw, 0 a loss', () => {
    const t = standings('soccer', [game('A', 1, 0, 'B'), game('C', 2, 2, 'D'), game('A', 0, 0, 'C')]);
    const row = (id: string) => t[0].rows.find((r) => r.entity_id === id);
    expect(row('A')).toMatchObject({ played: 2, won: 1, drawn: 1, lost: 0, points: 4, scored: 1, conceded: 0, diff: 1, live: false });
    expect(row('B')).toMatchObject({ played: 1, won: 0, drawn: 0, lost: 1, points: 0 });
    expect(t[0].rows.map((r) => r.entity_id)).toEqual(['A', 'C', 'D', 'B']);
    expect(t[0].rows.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
  });

  it('then goal difference', () => {
    // A and B both win once and lose once; A's difference is better.
    expect(order([game('A', 3, 0, 'C'), game('A', 0, 1, 'D'), game('B', 1, 0, 'C'), game('B', 0, 1, 'D')]).slice(0, 4)).toEqual(['D', 'A', 'B', 'C']);
  });

  it('then goals scored', () => {
    // A and B level on points (3) and difference (0); B scored more.
    const games = [game('A', 1, 0, 'C'), game('A', 0, 1, 'D'), game('B', 3, 2, 'C'), game('B', 2, 3, 'D')];
    const rows = standings('soccer', games)[0].rows;
    const a = rows.find((r) => r.entity_id === 'A');
    const b = rows.find((r) => r.entity_id === 'B');
    expect(a?.points).toBe(b?.points);
    expect(a?.diff).toBe(b?.diff);
    expect(rows.findIndex((r) => r.entity_id === 'B')).toBeLessThan(rows.findIndex((r) => r.entity_id === 'A'));
  });

  it('then head-to-head points among the teams still level', () => {
    // Z beat Y head to head; overall they are level on points, difference and goals.
    const games = [game('Y', 0, 1, 'Z'), game('Y', 1, 0, 'W'), game('Z', 0, 1, 'W'), game('X', 1, 1, 'Y'), game('X', 1, 1, 'Z'), game('X', 0, 0, 'W')];
    const rows = standings('soccer', games)[0].rows;
    const y = rows.find((r) => r.entity_id === 'Y');
    const z = rows.find((r) => r.entity_id === 'Z');
    expect([y?.points, y?.diff, y?.scored]).toEqual([z?.points, z?.diff, z?.scored]);
    expect(rows.findIndex((r) => r.entity_id === 'Z')).toBeLessThan(rows.findIndex((r) => r.entity_id === 'Y'));
  });

  it('a three-way tie decided by head-to-head difference (all level on head-to-head points)', () => {
    // P, Q, R beat each other in a cycle and each beat S: 6 points, +6, 10 goals each.
    const games = [game('P', 3, 0, 'Q'), game('Q', 2, 1, 'R'), game('R', 2, 1, 'P'), game('P', 6, 2, 'S'), game('Q', 8, 0, 'S'), game('R', 7, 1, 'S')];
    const rows = standings('soccer', games)[0].rows;
    expect(rows.slice(0, 3).map((r) => [r.points, r.diff, r.scored])).toEqual([
      [6, 6, 10],
      [6, 6, 10],
      [6, 6, 10],
    ]);
    // Among them: P +2, R 0, Q -2.
    expect(rows.map((r) => r.entity_id)).toEqual(['P', 'R', 'Q', 'S']);
  });

  it('a three-way tie decided by head-to-head goals (level on head-to-head points and difference)', () => {
    // Three draws among them (P-Q 2-2, Q-R 1-1, R-P 0-0), each beat S by one: 5 points, +1, 4 goals each.
    const games = [game('P', 2, 2, 'Q'), game('Q', 1, 1, 'R'), game('R', 0, 0, 'P'), game('P', 2, 1, 'S'), game('Q', 1, 0, 'S'), game('R', 3, 2, 'S')];
    const rows = standings('soccer', games)[0].rows;
    expect(new Set(rows.slice(0, 3).map((r) => `${r.points}/${r.diff}/${r.scored}`))).toEqual(new Set(['5/1/4']));
    // Goals among them: Q 3, P 2, R 1.
    expect(rows.map((r) => r.entity_id)).toEqual(['Q', 'P', 'R', 'S']);
  });

  it('then entity id when everything else is level', () => {
    // K and L drew 2-2, M and N drew 0-0: level everywhere else; K/L rank by id (K first), as M/N.
    const games = [game('K', 2, 2, 'L'), game('M', 0, 0, 'N'), game('K', 1, 0, 'M'), game('L', 1, 0, 'N'), game('K', 0, 1, 'N'), game('L', 0, 1, 'M')];
    expect(order(games)).toEqual(['K', 'L', 'M', 'N']);
    // The same season with ids swapped between K and L swaps them: entity id is the last step.
    const swapped = games.map((g) => ({ ...g, sides: g.sides.map((s) => ({ ...s, entity_id: s.entity_id === 'K' ? 'L' : s.entity_id === 'L' ? 'K' : s.entity_id })) }));
    expect(order(swapped)).toEqual(['K', 'L', 'M', 'N']);
  });

  it('groups: one table per group, games outside a group count in none; postponed, cancelled and suspended games count nothing', () => {
    const games = [
      game('A', 1, 0, 'B', { group: 'Group B' }),
      game('C', 1, 0, 'D', { group: 'Group A' }),
      game('A', 5, 0, 'C', { group: null }), // a knockout game
      game('B', 9, 0, 'A', { group: 'Group B', status: 'cancelled' }),
      game('D', 9, 0, 'C', { group: 'Group A', status: 'postponed' }),
      game('D', 9, 0, 'C', { group: 'Group A', status: 'scheduled' }),
    ];
    const t = standings('soccer', games);
    expect(t.map((x) => x.group)).toEqual(['Group A', 'Group B']);
    expect(t[1].rows.map((r) => [r.entity_id, r.played, r.scored])).toEqual([
      ['A', 1, 1],
      ['B', 1, 0],
    ]);
    expect(t[0].rows.map((r) => [r.entity_id, r.played])).toEqual([
      ['C', 1],
      ['D', 1],
    ]);
    // Without groups, one table with group null.
    expect(standings('soccer', [game('A', 1, 0, 'B', { group: null })]).map((x) => x.group)).toEqual([null]);
  });

  it('an abandoned (suspended) game counts nothing, a live game counts at its score and marks both rows', () => {
    const t = standings('soccer', [game('A', 2, 0, 'B', { status: 'suspended' }), game('C', 1, 0, 'D', { status: 'live' })])[0].rows;
    expect(t.find((r) => r.entity_id === 'A')).toMatchObject({ played: 0, points: 0, live: false });
    expect(t.find((r) => r.entity_id === 'C')).toMatchObject({ played: 1, points: 3, live: true });
    expect(t.find((r) => r.entity_id === 'D')).toMatchObject({ played: 1, points: 0, live: true });
  });
});

describe('basketball tables', () => {
  it('pct, then head-to-head pct, then point difference, then entity id; games behind from the leader', () => {
    const g = (h: string, hs: number, as: number, a: string) => game(h, hs, as, a, { group: null });
    // A and B 2-1; B beat A head to head. C 1-2, D 1-2 with C's difference better; head to head 1-1 between C and D? (C beat D)
    const games = [g('A', 100, 90, 'C'), g('A', 100, 90, 'D'), g('B', 95, 99, 'A'), g('B', 80, 70, 'C'), g('D', 90, 80, 'B'), g('C', 110, 80, 'D')];
    const rows = standings('basketball', games)[0].rows;
    // B, C and D are 1-2 and 1-1 among themselves: point difference decides (C +10, B -4, D -30).
    expect(rows.map((r) => r.entity_id)).toEqual(['A', 'C', 'B', 'D']);
    expect(rows[0]).toMatchObject({ won: 3, lost: 0, pct: 1, games_behind: 0 });
    expect(rows[1]).toMatchObject({ entity_id: 'C', won: 1, lost: 2, pct: 0.333, games_behind: 2, diff: 10 });
    expect(rows.every((r) => r.drawn === undefined && r.points === undefined)).toBe(true);
  });

  it('head-to-head pct decides between teams level on pct', () => {
    const g = (h: string, hs: number, as: number, a: string) => game(h, hs, as, a, { group: null });
    // X and Y both 1-1; Y beat X; X has the better difference, but head to head comes first.
    const rows = standings('basketball', [g('X', 80, 81, 'Y'), g('X', 150, 60, 'Z'), g('Y', 70, 90, 'W')])[0].rows;
    expect(rows.map((r) => r.entity_id)).toEqual(['W', 'Y', 'X', 'Z']);
    expect(rows[1].pct).toBe(0.5);
    expect(rows[2].diff).toBeGreaterThan(rows[1].diff);
  });
});

const play = (p: Partial<PlayFact> & { competitor_id: string; event_type: string }): PlayFact => ({
  period: { unit: 'half', num: 1, label: '1st half' },
  points: 1,
  state: {},
  ts: '2026-06-01T12:00:00.000Z',
  player_id: null,
  ...p,
});
const HOME = { entity_id: 'team:t:H', role: 'home' };
const AWAY = { entity_id: 'team:t:A', role: 'away' };
const facts = (status: string) => ({ competition_id: 'soccer_t_1', sport: 'soccer', status, competitors: [HOME, AWAY], start: '2026-06-01T12:00:00.000Z' });

describe('box score', () => {
  it('an own goal counts for the other side and not for its scorer; periods add up to the score', () => {
    const plays = [
      play({ competitor_id: HOME.entity_id, player_id: 'p:h1', event_type: 'goal' }),
      // A player of the away side turns the ball into his own net: the play counts for home.
      play({ competitor_id: HOME.entity_id, player_id: 'p:a1', event_type: 'own_goal', period: { unit: 'half', num: 2, label: '2nd half' } }),
      play({ competitor_id: AWAY.entity_id, player_id: 'p:a2', event_type: 'penalty_goal', period: { unit: 'half', num: 2, label: '2nd half' }, ts: '2026-06-01T13:30:00.000Z' }),
      play({ competitor_id: HOME.entity_id, event_type: 'final', points: 0, period: { unit: 'fulltime', num: 1, label: 'Full time' }, ts: '2026-06-01T13:50:00.000Z' }),
    ];
    const b = boxScore(facts('final'), plays);
    expect(b.competitors.map((c) => [c.score, c.periods.map((p) => p.points)])).toEqual([
      [2, [1, 1]],
      [1, [0, 1]],
    ]);
    expect(b.winner).toBe(HOME.entity_id);
    expect(b.as_of).toBe('2026-06-01T13:50:00.000Z');
    const og = b.players.find((p) => p.player_id === 'p:a1');
    expect(og).toEqual({ player_id: 'p:a1', competitor_id: AWAY.entity_id, points: 0, by_type: { own_goal: 1 } });
    expect(b.players.find((p) => p.player_id === 'p:a2')).toMatchObject({ competitor_id: AWAY.entity_id, points: 1, by_type: { penalty_goal: 1 } });
  });

  it('a game decided on penalties: extra time listed with its zeros, the shoot-out apart, the kicks in no one’s points', () => {
    const et = { unit: 'extra_time', num: 2, label: 'Extra time 2nd half' };
    const so = { unit: 'shootout', num: 1, label: 'Penalty shoot-out' };
    const plays = [
      play({ competitor_id: HOME.entity_id, player_id: 'p:h1', event_type: 'goal' }),
      play({ competitor_id: AWAY.entity_id, player_id: 'p:a1', event_type: 'goal', period: et }),
      play({ competitor_id: HOME.entity_id, player_id: 'p:h1', event_type: 'penalty_goal', period: so }),
      play({ competitor_id: AWAY.entity_id, player_id: 'p:a1', event_type: 'penalty_missed', points: 0, period: so }),
      play({ competitor_id: HOME.entity_id, player_id: 'p:h2', event_type: 'penalty_goal', period: so }),
    ];
    const b = boxScore(facts('final'), plays);
    expect(b.competitors[0].periods.map((p) => `${p.unit}${p.num}:${p.points}`)).toEqual(['half1:1', 'half2:0', 'extra_time1:0', 'extra_time2:0']);
    expect(b.competitors.map((c) => [c.score, c.shootout])).toEqual([
      [1, 2],
      [1, 0],
    ]);
    expect(b.winner).toBe(HOME.entity_id);
    expect(b.players.find((p) => p.player_id === 'p:h1')).toMatchObject({ points: 1, by_type: { goal: 1, shootout_penalty_goal: 1 } });
    // The archive's form: one shoot-out play naming the winner, its totals in the running state.
    const summary = boxScore(facts('final'), [
      play({ competitor_id: HOME.entity_id, event_type: 'goal' }),
      play({ competitor_id: AWAY.entity_id, event_type: 'goal' }),
      play({ competitor_id: AWAY.entity_id, event_type: 'shootout', points: 0, period: so, state: { home: 1, away: 1, home_shootout: 3, away_shootout: 4 } }),
    ]);
    expect(summary.competitors.map((c) => c.shootout)).toEqual([3, 4]);
    expect(summary.winner).toBe(AWAY.entity_id);
  });

  it('a game won in the first half of extra time lists both halves of extra time once over', () => {
    const et1 = { unit: 'extra_time', num: 1, label: 'Extra time 1st half' };
    const plays = [play({ competitor_id: AWAY.entity_id, player_id: 'p:a1', event_type: 'goal', period: et1 })];
    expect(boxScore(facts('final'), plays).competitors[1].periods.map((p) => `${p.unit}${p.num}:${p.points}`)).toEqual(['half1:0', 'half2:0', 'extra_time1:1', 'extra_time2:0']);
    expect(boxScore(facts('live'), plays).competitors[1].periods.map((p) => `${p.unit}${p.num}`)).toEqual(['half1', 'half2', 'extra_time1']);
  });

  it('while live: periods so far, no winner; a draw at the end has none either', () => {
    const live = boxScore(facts('live'), [play({ competitor_id: AWAY.entity_id, event_type: 'goal', player_id: 'p:a1' })]);
    expect(live.competitors[1].periods.map((p) => p.label)).toEqual(['1st half']);
    expect(live.winner).toBeNull();
    const draw = boxScore(facts('final'), []);
    expect(draw.competitors.map((c) => c.periods.length)).toEqual([2, 2]);
    expect(draw.winner).toBeNull();
    expect(draw.as_of).toBe('2026-06-01T12:00:00.000Z');
  });

  it('basketball: quarters and overtimes in order', () => {
    const q = (num: number, unit = 'quarter') => ({ unit, num, label: `${unit}${num}` });
    const b = boxScore({ ...facts('final'), sport: 'basketball' }, [
      play({ competitor_id: HOME.entity_id, event_type: 'three_pointer', points: 3, period: q(1), player_id: 'p:1' }),
      play({ competitor_id: AWAY.entity_id, event_type: 'two_pointer', points: 2, period: q(2, 'overtime'), player_id: 'p:2' }),
    ]);
    expect(b.competitors[1].periods.map((p) => `${p.unit}${p.num}`)).toEqual(['quarter1', 'quarter2', 'quarter3', 'quarter4', 'overtime1', 'overtime2']);
    expect(b.competitors.map((c) => c.score)).toEqual([3, 2]);
  });
});

describe('leaders and live scores', () => {
  it('goals count goals and penalty goals, not own goals or shoot-out kicks; ties share a rank, ordered by id', () => {
    const sp = (player: string, type: string, order: string, unit = 'half'): SeasonPlay => ({
      ...play({ competitor_id: HOME.entity_id, player_id: player, event_type: type, period: { unit, num: 1, label: '' } }),
      competitors: [HOME, AWAY],
      order,
    });
    const totals = playerTotals([sp('b', 'goal', '1'), sp('b', 'penalty_goal', '2'), sp('a', 'goal', '3'), sp('a', 'goal', '4'), sp('c', 'own_goal', '5'), sp('c', 'own_goal', '6'), sp('c', 'own_goal', '7'), sp('d', 'goal', '8'), sp('d', 'penalty_goal', '9', 'shootout')]);
    expect(leaders(totals.values(), 'goals')).toEqual([
      { rank: 1, player_id: 'a', competitor_id: HOME.entity_id, value: 2 },
      { rank: 1, player_id: 'b', competitor_id: HOME.entity_id, value: 2 },
      { rank: 3, player_id: 'd', competitor_id: HOME.entity_id, value: 1 },
    ]);
    expect(leaders(totals.values(), 'own_goal')).toEqual([{ rank: 1, player_id: 'c', competitor_id: AWAY.entity_id, value: 3 }]);
  });

  it('a live score in each tier: provisional adds only open provisional events', () => {
    const e = (id: string, tier: string, team: string, extra: Partial<{ provisional_id: string; retracted_id: string; type: string }> = {}) => ({
      id,
      type: extra.type ?? 'score',
      tier,
      team,
      points: 1,
      provisional_id: extra.provisional_id ?? null,
      retracted_id: extra.retracted_id ?? null,
    });
    const events = [
      e('1', 'provisional', 'H'),
      e('2', 'confirmed', 'H', { provisional_id: '1' }),
      e('3', 'provisional', 'A'),
      e('4', 'provisional', 'A'),
      e('5', 'confirmed', 'A', { type: 'score_retracted', retracted_id: '4' }),
      e('6', 'confirmed', 'A'),
    ];
    expect(Object.fromEntries(liveScore(events, 'confirmed'))).toEqual({ H: 1, A: 1 });
    expect(Object.fromEntries(liveScore(events, 'provisional'))).toEqual({ H: 1, A: 2 });
  });
});
