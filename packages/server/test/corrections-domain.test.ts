import { describe, expect, it } from 'vitest';
import {
  contradictedByFinal,
  coversGame,
  crowdPeriod,
  parseWithdraws,
  planWithdrawal,
  resolveWithdrawn,
  type CorrectionReader,
  type EventOnRecord,
  type GameOnRecord,
  type PlayOnRecord,
} from '../src/domain/corrections.js';
import { crowdPlays, liveScore } from '../src/domain/standings/index.js';
import { SvcError } from '../src/domain/errors.js';

/** The rules of corrections (docs/corrections.md), without a store. */

const HOME = 'team:wc:ARG';
const AWAY = 'team:wc:FRA';
const half = (num: number) => ({ unit: 'half', num, label: num === 1 ? '1st half' : '2nd half' });
const competitors = [
  { idx: 0, role: 'home', entity_id: HOME, score: 0 },
  { idx: 1, role: 'away', entity_id: AWAY, score: 0 },
];
const goalPlay: PlayOnRecord = { seq: 2, competitor_id: HOME, player_id: 'player:wc:messi', event_type: 'goal', points: 1, period: half(1), event_id: 'evt_000000000010', withdrawn_by: null };
const goalEvent: EventOnRecord = { id: 'evt_000000000010', game_id: 'soccer_1', type: 'score', tier: 'confirmed', team: 'ARG', points: 1, clock: "23'" };

function reader(over: Partial<CorrectionReader> = {}): CorrectionReader {
  return {
    play: async (seq) => (seq === 2 ? goalPlay : seq === 1 ? { ...goalPlay, seq: 1, event_type: 'kickoff', points: 0, event_id: null } : undefined),
    playOfEvent: async (id) => (id === goalEvent.id ? goalPlay : undefined),
    event: async (id) => (id === goalEvent.id ? goalEvent : undefined),
    confirmationOf: async () => undefined,
    retracted: async () => false,
    ...over,
  };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
  return 'none';
}

describe('corrections: what withdraws names', () => {
  it('a seq (number or digits) names a play, evt_… an event, anything else nothing', () => {
    expect(parseWithdraws(7)).toEqual({ kind: 'play', seq: 7 });
    expect(parseWithdraws('7')).toEqual({ kind: 'play', seq: 7 });
    expect(parseWithdraws('evt_000000000010')).toEqual({ kind: 'event', id: 'evt_000000000010' });
    for (const v of [0, -1, 1.5, '07', 'x', '', 'evt_', 'evt_x']) expect(parseWithdraws(v)).toBeNull();
  });

  it('finds the play and its event either way, and names each refusal', async () => {
    expect(await resolveWithdrawn('soccer_1', 2, reader())).toEqual({ play: goalPlay, event: goalEvent });
    expect(await resolveWithdrawn('soccer_1', goalEvent.id, reader())).toEqual({ play: goalPlay, event: goalEvent });
    expect(await code(resolveWithdrawn('soccer_1', 9, reader()))).toBe('withdraws_unknown');
    expect(await code(resolveWithdrawn('soccer_1', 'evt_000000000099', reader()))).toBe('withdraws_unknown');
    expect(await code(resolveWithdrawn('soccer_2', goalEvent.id, reader()))).toBe('withdraws_other_game');
    expect(await code(resolveWithdrawn('soccer_1', 1, reader()))).toBe('withdraws_not_a_score');
    expect(await code(resolveWithdrawn('soccer_1', goalEvent.id, reader({ retracted: async () => true })))).toBe('already_withdrawn');
    expect(await code(resolveWithdrawn('soccer_1', 2, reader({ play: async () => ({ ...goalPlay, withdrawn_by: 3 }) })))).toBe('already_withdrawn');
    // A provisional stands for its confirmation; one never confirmed is not a score.
    const provisional = { ...goalEvent, id: 'evt_000000000009', tier: 'provisional' };
    const withProvisional = reader({ event: async (id) => (id === provisional.id ? provisional : undefined) });
    expect(await code(resolveWithdrawn('soccer_1', provisional.id, withProvisional))).toBe('withdraws_not_a_score');
    expect(await resolveWithdrawn('soccer_1', provisional.id, { ...withProvisional, confirmationOf: async () => goalEvent })).toEqual({ play: goalPlay, event: goalEvent });
  });
});

describe('corrections: what a withdrawal moves', () => {
  const covered: GameOnRecord = { sport: 'soccer', competitors: competitors.map((c) => ({ ...c, score: c.role === 'home' ? 1 : 0 })), covered: true, state: { home: 1, away: 0 }, lastSeq: 2 };

  it('an official goal: the official score moves back, the correction takes its player and period', () => {
    const plan = planWithdrawal(covered, { play: goalPlay, event: goalEvent }, { event_type: 'score_withdrawn', withdraws: 2 });
    expect(plan.play).toMatchObject({ seq: 3, competitor_id: HOME, player_id: 'player:wc:messi', points: -1, period: half(1), state: { home: 0, away: 0 }, withdraws: '2', event_id: goalEvent.id });
    expect(plan.scores).toEqual([{ idx: 0, score: 0 }]);
    expect(plan.retract).toBe(goalEvent);
  });

  it('a crowd score no official play had: the covered game’s official score stays', () => {
    const plan = planWithdrawal(covered, { play: null, event: goalEvent }, { event_type: 'score_withdrawn', withdraws: goalEvent.id, period: half(2) });
    expect(plan.scores).toEqual([]);
    expect(plan.play).toMatchObject({ state: { home: 1, away: 0 }, period: half(2), player_id: null });
  });

  it('the crowd’s own game: its crowd score moves back, the period comes from the clock', () => {
    const own: GameOnRecord = { ...covered, covered: false, state: { home: 0, away: 0 } };
    const plan = planWithdrawal(own, { play: null, event: { ...goalEvent, clock: "67'" } }, { event_type: 'score_withdrawn', withdraws: goalEvent.id });
    expect(plan.scores).toEqual([{ idx: 0, score: 0 }]);
    expect(plan.play).toMatchObject({ state: { home: 0, away: 0 }, period: half(2) });
  });

  it('a competitor or points other than the withdrawn score’s are refused', () => {
    expect(() => planWithdrawal(covered, { play: goalPlay, event: goalEvent }, { event_type: 'score_withdrawn', withdraws: 2, competitor_id: AWAY })).toThrow(/not team:wc:FRA/);
    expect(() => planWithdrawal(covered, { play: goalPlay, event: goalEvent }, { event_type: 'score_withdrawn', withdraws: 2, points: 2 })).toThrow(/worth 1/);
    expect(planWithdrawal(covered, { play: goalPlay, event: goalEvent }, { event_type: 'score_withdrawn', withdraws: 2, points: 0, competitor_id: HOME }).play.points).toBe(-1);
  });
});

describe('corrections: the final result judges the crowd', () => {
  it('keeps what the final score holds beside the official scores, in order, and withdraws the rest', () => {
    const final = new Map([['ARG', 2], ['FRA', 1]]);
    const held = [{ team: 'ARG', points: 1 }];
    const crowd = [
      { id: 'a1', team: 'ARG', points: 1 },
      { id: 'a2', team: 'ARG', points: 1 },
      { id: 'f1', team: 'FRA', points: 1 },
      { id: 'x1', team: 'XXX', points: 1 },
    ];
    expect(contradictedByFinal(final, held, crowd)).toEqual(['a2', 'x1']);
    // An official play that scored the same goal again (outside the window): the crowd's copy goes.
    expect(contradictedByFinal(new Map([['ARG', 1]]), [{ team: 'ARG', points: 1 }], [{ id: 'dup', team: 'ARG', points: 1 }])).toEqual(['dup']);
    expect(contradictedByFinal(new Map([['ARG', 0]]), [], [])).toEqual([]);
  });

  it('a game is covered by any official play but a correction', () => {
    expect(coversGame([])).toBe(false);
    expect(coversGame([{ event_type: 'score_withdrawn' }])).toBe(false);
    expect(coversGame([{ event_type: 'score_withdrawn' }, { event_type: 'kickoff' }])).toBe(true);
  });
});

describe('corrections: the crowd’s own game in the box score and the live standings', () => {
  it('places crowd scores by their clock, else after the score before, else in the first period', () => {
    expect(crowdPeriod('soccer', "45+2'", null)).toEqual(half(1));
    expect(crowdPeriod('soccer', '46', null)).toEqual(half(2));
    expect(crowdPeriod('soccer', "118'", null)).toMatchObject({ unit: 'extra_time', num: 2 });
    expect(crowdPeriod('soccer', null, half(2))).toEqual(half(2));
    expect(crowdPeriod('basketball', '5:32', null)).toEqual({ unit: 'quarter', num: 1, label: 'Q1' });
    const plays = crowdPlays('soccer', competitors, [
      { team: 'ARG', points: 1, clock: "10'", ts: '2026-06-11T18:10:00.000Z' },
      { team: 'FRA', points: 1, clock: null, ts: '2026-06-11T18:20:00.000Z' },
      { team: 'FRA', points: 1, clock: "70'", ts: '2026-06-11T19:10:00.000Z' },
      { team: 'ESP', points: 1, clock: "71'", ts: '2026-06-11T19:11:00.000Z' },
    ]);
    expect(plays.map((p) => [p.competitor_id, p.period.num, p.state])).toEqual([
      [HOME, 1, { home: 1, away: 0 }],
      [AWAY, 1, { home: 1, away: 1 }],
      [AWAY, 2, { home: 1, away: 2 }],
    ]);
  });

  it('a corrected confirmed score no longer counts in either tier', () => {
    const events = [
      { id: 'evt_1', type: 'score', tier: 'confirmed', team: 'ARG', points: 1, provisional_id: null, retracted_id: null },
      { id: 'evt_2', type: 'score', tier: 'confirmed', team: 'ARG', points: 1, provisional_id: null, retracted_id: null },
      { id: 'evt_3', type: 'score_retracted', tier: 'confirmed', team: 'ARG', points: 1, provisional_id: null, retracted_id: 'evt_1' },
    ];
    expect(liveScore(events, 'confirmed').get('ARG')).toBe(1);
    expect(liveScore(events, 'provisional').get('ARG')).toBe(1);
  });
});
