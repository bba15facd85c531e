import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { Deadlines } from '../src/domain/consensus/deadlines.js';
import { ConsensusEngine, ReporterWeights, type ConsensusOptions, type Outcome, type ReportIn } from '../src/domain/consensus/engine.js';

const T0 = Date.parse('2026-06-11T12:00:00.000Z');

/** A fresh engine on a manual clock; `report` fills a BRA 1-point report observed and received now. */
function setup(options: Partial<ConsensusOptions> = {}, weights?: ReporterWeights) {
  const clock = new ManualClock(T0);
  const engine = new ConsensusEngine(clock, options, weights);
  const report = (reporterId: string, extra: Partial<ReportIn> = {}) =>
    engine.submit({ reporterId, gameId: 'soccer_1', team: 'BRA', points: 1, observedAt: clock.now(), receivedAt: clock.now(), ...extra });
  return { clock, engine, report };
}

const kinds = (outcomes: Outcome[]) => outcomes.map((o) => o.kind);

function confirmedOf(outcomes: Outcome[]) {
  const c = outcomes.find((o) => o.kind === 'confirmed');
  if (!c || c.kind !== 'confirmed') throw new Error(`no confirmed outcome in ${JSON.stringify(outcomes)}`);
  return c;
}

/** A reporter whose past reports were retracted `times` times. */
function weightsWithLosers(ids: string[], times: number): ReporterWeights {
  const w = new ReporterWeights();
  for (const id of ids) for (let i = 0; i < times; i++) w.record(id, false);
  return w;
}

describe('provisional and confirmation', () => {
  it('publishes the first report of a new candidate at once', () => {
    const { clock, report } = setup();
    const r = report('r1');
    expect(r).toMatchObject({ duplicate: false, tier: 'provisional' });
    expect(r.candidateId).toEqual(expect.any(String));
    expect(r.outcomes).toEqual([
      {
        kind: 'provisional',
        candidateId: r.candidateId,
        gameId: 'soccer_1',
        team: 'BRA',
        points: 1,
        eventType: 'score',
        clock: null,
        at: clock.now(),
        confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: expect.any(Number) },
        evidence: expect.any(Object),
      },
    ]);
  });

  it("gives the first report's agreement as its weighted share of the game's active reporters", () => {
    const { report } = setup();
    report('other', { team: 'ARG' });
    const r = report('r1');
    expect(r.outcomes[0]).toMatchObject({ kind: 'provisional', confidence: { agreement: 0.5, reporters: 1, latency_ms: 0 } });
    const p = r.outcomes[0].kind === 'provisional' ? r.outcomes[0].confidence.probability : NaN;
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1);
    expect(Math.round(p * 1000) / 1000).toBe(p);
  });

  it('confirms on the third distinct reporter with agreement, reporters and latency from the first receipt', () => {
    const { clock, report } = setup();
    const first = report('r1', { eventType: 'goal' });
    clock.advance(2_000);
    expect(report('r2').outcomes).toEqual([]);
    clock.advance(2_000);
    const third = report('r3', { clock: "67'" });
    expect(third.candidateId).toBe(first.candidateId);
    expect(third.tier).toBe('confirmed');
    expect(third.outcomes).toEqual([
      {
        kind: 'confirmed',
        candidateId: first.candidateId,
        gameId: 'soccer_1',
        team: 'BRA',
        points: 1,
        eventType: 'goal',
        clock: "67'",
        at: clock.now(),
        confidence: { agreement: 1, reporters: 3, latency_ms: 4_000, probability: expect.any(Number) },
        official: false,
        hadProvisional: true,
        evidence: expect.any(Object),
      },
    ]);
  });

  it('waits for agreement: 3 of 6 active reporters is not enough, the 4th confirms at 0.667', () => {
    const { report } = setup();
    // Three other active reporters, each on a different score so none of theirs confirms.
    [1, 2, 3].forEach((points) => report(`x${points}`, { team: 'ARG', points }));
    report('r1');
    report('r2');
    expect(report('r3').outcomes).toEqual([]);
    const fourth = report('x1', { observedAt: T0 + 10_000 });
    expect(confirmedOf(fourth.outcomes).confidence).toEqual({ agreement: 0.667, reporters: 4, latency_ms: 0, probability: expect.any(Number) });
  });
});

describe('repeats, second plays and windows', () => {
  it('counts a reporter repeating itself once: 10 identical reports are 1 vote and never confirm', () => {
    const { clock, engine, report } = setup();
    const first = report('spam');
    for (let i = 0; i < 9; i++) {
      clock.advance(100);
      expect(report('spam', { observedAt: T0 })).toEqual({ candidateId: null, duplicate: true, repeatOf: first.candidateId, tier: 'provisional', outcomes: [] });
    }
    expect(engine.openCandidates()).toBe(1);
    clock.advance(90_000);
    const published = first.outcomes[0].kind === 'provisional' ? first.outcomes[0].confidence.probability : NaN;
    // A retraction carries the probability its provisional went out with (rule 17).
    expect(engine.tick()).toEqual([{ kind: 'retracted', candidateId: first.candidateId, gameId: 'soccer_1', team: 'BRA', points: 1, at: clock.now(), probability: published }]);
  });

  it('keeps a steady stream of repeats (each within 5 s of the last) as one vote', () => {
    const { clock, engine, report } = setup();
    report('spam');
    for (let i = 0; i < 20; i++) {
      clock.advance(3_000);
      expect(report('spam').duplicate).toBe(true);
    }
    expect(engine.size().candidates).toBe(1);
  });

  it('treats the same team scoring twice within 30 s as two plays: two provisionals, two confirmations', () => {
    const { clock, report } = setup();
    const all: Outcome[] = [];
    for (const id of ['r1', 'r2', 'r3']) all.push(...report(id).outcomes);
    clock.advance(20_000);
    for (const id of ['r1', 'r2', 'r3']) all.push(...report(id).outcomes);
    expect(kinds(all)).toEqual(['provisional', 'confirmed', 'provisional', 'confirmed']);
    expect(new Set(all.map((o) => o.candidateId)).size).toBe(2);
  });

  it('joins late reports to a confirmed candidate silently: no duplicate, no retraction, no credit', () => {
    const { clock, engine, report } = setup();
    const first = report('r1');
    report('r2');
    report('r3');
    clock.advance(10_000);
    for (const id of ['r4', 'r5']) {
      expect(report(id, { observedAt: T0 + 2_000 })).toEqual({ candidateId: first.candidateId, duplicate: false, tier: 'confirmed', outcomes: [] });
    }
    clock.advance(90_000);
    expect(engine.tick()).toEqual([]);
    expect(engine.weights.snapshot().r4).toBeUndefined();
    expect(engine.weights.snapshot().r1).toMatchObject({ agreed: 1, disagreed: 0, weight: 2 / 3 });
  });

  it('never merges different points or teams', () => {
    const { engine, report } = setup();
    const ids = [report('r1').candidateId, report('r2', { points: 2 }).candidateId, report('r3', { team: 'ARG' }).candidateId, report('r4', { gameId: 'soccer_2' }).candidateId];
    expect(new Set(ids).size).toBe(4);
    expect(engine.openCandidates()).toBe(4);
    expect(engine.openCandidates('soccer_1')).toBe(3);
  });

  it('joins at exactly 30 000 ms apart and splits at 30 001 ms, either side', () => {
    const a = setup();
    const first = a.report('r1');
    expect(a.report('r2', { observedAt: T0 + 30_000 }).candidateId).toBe(first.candidateId);
    expect(a.report('r3', { observedAt: T0 - 30_000 }).candidateId).toBe(first.candidateId);
    const b = setup();
    const one = b.report('r1');
    const later = b.report('r2', { observedAt: T0 + 30_001 });
    const earlier = b.report('r3', { observedAt: T0 - 30_001 });
    expect(new Set([one.candidateId, later.candidateId, earlier.candidateId]).size).toBe(3);
    expect(kinds([...later.outcomes, ...earlier.outcomes])).toEqual(['provisional', 'provisional']);
  });

  it('sends a report to the candidate observed nearest to it when two are open', () => {
    const { clock, report } = setup();
    const goal1 = report('r1');
    clock.advance(20_000);
    const goal2 = report('r1');
    expect(goal2.candidateId).not.toBe(goal1.candidateId);
    expect(report('r2', { observedAt: T0 + 19_000 }).candidateId).toBe(goal2.candidateId);
    expect(report('r3', { observedAt: T0 + 1_000 }).candidateId).toBe(goal1.candidateId);
  });
});

describe('official plays', () => {
  it('confirm the matching open candidate at once, with latency from the first receipt', () => {
    const { clock, engine, report } = setup();
    const first = report('r1');
    clock.advance(4_000);
    report('r2');
    clock.advance(3_000);
    const out = engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'penalty', clock: "12'", observedAt: T0 + 1_000 });
    expect(out).toEqual([
      {
        kind: 'confirmed',
        candidateId: first.candidateId,
        gameId: 'soccer_1',
        team: 'BRA',
        points: 1,
        eventType: 'penalty',
        clock: "12'",
        at: clock.now(),
        confidence: { agreement: 1, reporters: 2, latency_ms: 7_000, probability: 1 },
        official: true,
        hadProvisional: true,
      },
    ]);
    expect(report('r3')).toMatchObject({ candidateId: first.candidateId, tier: 'confirmed', outcomes: [] });
    clock.advance(90_000);
    expect(engine.tick()).toEqual([]);
  });

  it('without reports yield a confirmed outcome with no provisional; crowd reports then join it silently', () => {
    const { clock, engine, report } = setup();
    const out = engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 });
    expect(out).toEqual([
      expect.objectContaining({ kind: 'confirmed', eventType: 'goal', clock: null, at: clock.now(), official: true, hadProvisional: false, confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 } }),
    ]);
    clock.advance(5_000);
    expect(report('r1', { observedAt: T0 + 2_000 })).toEqual({ candidateId: out[0].candidateId, duplicate: false, tier: 'confirmed', outcomes: [] });
    expect(engine.openCandidates()).toBe(0);
  });

  it('match a crowd-confirmed play silently once; a second official play of the same score is a second play', () => {
    const { engine, report } = setup();
    for (const id of ['r1', 'r2', 'r3']) report(id);
    const play = { gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 };
    expect(engine.official(play)).toEqual([]);
    expect(kinds(engine.official(play))).toEqual(['confirmed']);
  });

  it('confirm an unpublished candidate without inventing a provisional', () => {
    const { engine, report } = setup({}, weightsWithLosers(['low'], 4));
    const low = report('low');
    expect(low.outcomes).toEqual([]);
    const out = engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 });
    expect(out).toEqual([expect.objectContaining({ kind: 'confirmed', candidateId: low.candidateId, hadProvisional: false, official: true })]);
  });
});

describe('retraction, activity and memory', () => {
  it('retracts exactly 90 s after the first report (89 999 ms: not yet)', () => {
    const { clock, engine, report } = setup();
    const first = report('r1');
    clock.advance(10_000);
    report('r2');
    clock.advance(79_999);
    expect(engine.tick()).toEqual([]);
    clock.advance(1);
    expect(engine.tick()).toEqual([{ kind: 'retracted', candidateId: first.candidateId, gameId: 'soccer_1', team: 'BRA', points: 1, at: T0 + 90_000, probability: expect.any(Number) }]);
    expect(engine.tick()).toEqual([]);
    expect(engine.openCandidates()).toBe(0);
  });

  it('counts a reporter active for 2 min after its last report on the game, not after', () => {
    const agreementAfter = (idleMs: number) => {
      const { clock, report } = setup();
      report('idle', { team: 'ARG' });
      clock.advance(idleMs);
      report('r1');
      report('r2');
      return confirmedOf(report('r3').outcomes).confidence.agreement;
    };
    expect(agreementAfter(120_000)).toBe(0.75);
    expect(agreementAfter(120_001)).toBe(1);
  });

  it('confirms on tick when agreement rises as other reporters go idle', () => {
    const { clock, engine, report } = setup();
    [1, 2, 3].forEach((points) => report(`x${points}`, { team: 'ARG', points }));
    clock.advance(60_000);
    for (const id of ['r1', 'r2', 'r3']) expect(kinds(report(id).outcomes)).not.toContain('confirmed');
    clock.advance(60_001);
    const out = engine.tick();
    expect(kinds(out)).toEqual(['confirmed', 'retracted', 'retracted', 'retracted']);
    // 1, not 0.6: the idle reporters no longer count (their retractions alone would give 0.6).
    expect(confirmedOf(out).confidence.agreement).toBe(1);
  });

  it('prunes closed candidates, idle and then absent voices on tick so memory returns to zero', () => {
    const { clock, engine, report } = setup();
    for (let game = 0; game < 50; game++) {
      const gameId = `soccer_${game}`;
      for (const id of ['r1', 'r2', 'r3']) report(id, { gameId });
      report('r4', { gameId, team: 'ARG' });
    }
    expect(engine.openCandidates()).toBe(50);
    clock.advance(90_000);
    expect(engine.tick()).toHaveLength(50);
    expect(engine.openCandidates()).toBe(0);
    // Closed candidates still absorb late reports for a window after retraction.
    expect(engine.size()).toEqual({ games: 50, candidates: 100, activeReporters: 200 });
    clock.advance(30_001);
    expect(engine.tick()).toEqual([]);
    // Idle, but still present: their silence about the game's next play is evidence (rule 16).
    expect(engine.size()).toEqual({ games: 50, candidates: 0, activeReporters: 0 });
    clock.advance(engine.options.presenceMs);
    expect(engine.tick()).toEqual([]);
    expect(engine.size()).toEqual({ games: 0, candidates: 0, activeReporters: 0 });
  });

  it('starts a new candidate for a report of a dropped one, even from its own voter, while the bucket lives on', () => {
    const { clock, engine, report } = setup();
    const seen = clock.now();
    const first = report('r1');
    clock.advance(60_000);
    // Keeps the game, team and points in use after the first candidate is dropped.
    const later = report('r2');
    clock.advance(60_001);
    engine.tick();
    expect(engine.size()).toMatchObject({ candidates: 1 });
    const again = report('r1', { observedAt: seen });
    expect(again).toMatchObject({ duplicate: false });
    expect([first.candidateId, later.candidateId]).not.toContain(again.candidateId);
    expect(engine.size()).toMatchObject({ candidates: 2 });
  });

  it('forgets a final game at once', () => {
    const { engine, report } = setup();
    report('r1');
    report('r1', { gameId: 'soccer_2' });
    engine.forgetGame('soccer_1');
    expect(engine.openCandidates('soccer_1')).toBe(0);
    expect(engine.size()).toEqual({ games: 1, candidates: 1, activeReporters: 1 });
  });
});

describe('reporter weights', () => {
  it('follow Laplace: (agreed + 1) / (agreed + disagreed + 2), a newcomer at 0.5', () => {
    const w = new ReporterWeights();
    expect(w.weight('new')).toBe(0.5);
    w.record('a', true);
    w.record('a', true);
    w.record('a', false);
    expect(w.snapshot()).toEqual({ a: { agreed: 2, disagreed: 1, officialConfirmed: 0, officialContradicted: 0, missed: 0, probation: 0, weight: 0.6 } });
    expect(new ReporterWeights({ b: { agreed: 0, disagreed: 3 } }).weight('b')).toBe(0.2);
  });

  it('two colluders against three honest reporters: honest confirmed at 0.6, fake retracted, colluders sink', () => {
    const { clock, engine, report } = setup();
    const fake = report('x1', { team: 'ARG' });
    clock.advance(1_000);
    report('x2', { team: 'ARG' });
    const honest: Outcome[] = [];
    for (const id of ['h1', 'h2', 'h3']) {
      clock.advance(1_000);
      honest.push(...report(id).outcomes);
    }
    expect(confirmedOf(honest).confidence).toMatchObject({ agreement: 0.6, reporters: 3, latency_ms: 2_000 });
    clock.set(T0 + 89_999);
    expect(engine.tick()).toEqual([]);
    clock.set(T0 + 90_000);
    expect(engine.tick()).toEqual([expect.objectContaining({ kind: 'retracted', candidateId: fake.candidateId })]);
    const w = engine.weights;
    expect(w.weight('x1')).toBeCloseTo(1 / 3);
    expect(Math.max(w.weight('x1'), w.weight('x2'))).toBeLessThan(Math.min(w.weight('h1'), w.weight('h2'), w.weight('h3')));
  });

  it('keeps a low-weight reporter (< 0.2) from starting a provisional; a trusted joiner publishes it', () => {
    const { engine, report } = setup({}, weightsWithLosers(['low'], 4));
    expect(engine.weights.weight('low')).toBeLessThan(0.2);
    const low = report('low');
    expect(low).toMatchObject({ duplicate: false, tier: 'provisional', outcomes: [] });
    expect(engine.openCandidates()).toBe(1);
    const joined = report('good');
    expect(joined.candidateId).toBe(low.candidateId);
    expect(joined.outcomes).toEqual([expect.objectContaining({ kind: 'provisional', confidence: expect.objectContaining({ reporters: 2 }) })]);
  });

  it('publishes provisional and confirmed together when only low-weight reporters confirm', () => {
    const { engine, report } = setup({}, weightsWithLosers(['l1', 'l2', 'l3'], 4));
    expect(report('l1').outcomes).toEqual([]);
    expect(report('l2').outcomes).toEqual([]);
    const third = report('l3');
    expect(kinds(third.outcomes)).toEqual(['provisional', 'confirmed']);
    expect(confirmedOf(third.outcomes).hadProvisional).toBe(true);
    expect(engine.weights.weight('l1')).toBeCloseTo(2 / 7);
  });

  it('retracts an unpublished candidate silently but still records the disagreement', () => {
    const { clock, engine, report } = setup({}, weightsWithLosers(['low'], 4));
    report('low');
    clock.advance(90_000);
    expect(engine.tick()).toEqual([]);
    expect(engine.weights.snapshot().low.disagreed).toBe(5);
  });
});

describe('a reporter spreading its reports apart', () => {
  // Observed times 31 s apart never join each other: without a cap, each opened a candidate and a
  // provisional event, and every later report of that bucket scanned all of them.
  const spread = (k: number) => ({ observedAt: T0 - k * 31_000 });

  it('opens at most maxOpenStartedPerReporter candidates per game, team and points; the rest are absorbed', () => {
    // Rule 13's limit of unsupported candidates per voice is lifted here to see rule 10 alone.
    const { engine, report } = setup({ maxOpenStartedPerReporter: 4, maxUnsupportedPerVoice: 100 });
    const results = Array.from({ length: 10 }, (_, k) => report('spammer', spread(k)));
    expect(results.map((r) => r.outcomes.length)).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
    expect(results.slice(4).every((r) => r.candidateId === null && r.absorbed === true && !r.duplicate)).toBe(true);
    expect(engine.openCandidates('soccer_1')).toBe(4);
    expect(engine.size().candidates).toBe(4);
    // Other buckets, other reporters and votes for candidates it did not start are not affected.
    expect(report('spammer', { team: 'ARG' }).outcomes.map((o) => o.kind)).toEqual(['provisional']);
    expect(report('honest', spread(20)).outcomes.map((o) => o.kind)).toEqual(['provisional']);
    const joined = report('spammer', { observedAt: T0 - 20 * 31_000 + 1_000 });
    expect(joined.candidateId).not.toBeNull();
    expect(joined.absorbed).toBeUndefined();
  });

  it('frees a slot when one of its candidates closes', () => {
    const { clock, engine, report } = setup({ maxOpenStartedPerReporter: 2, maxUnsupportedPerVoice: 100 });
    report('spammer', spread(0));
    report('spammer', spread(1));
    expect(report('spammer', spread(2)).absorbed).toBe(true);
    clock.advance(90_000);
    expect(kinds(engine.tick())).toEqual(['retracted', 'retracted']);
    const again = report('spammer', spread(3));
    expect(again.candidateId).not.toBeNull();
  });

  it('defaults to 16', () => {
    const { report } = setup({ maxUnsupportedPerVoice: 100 });
    const results = Array.from({ length: 20 }, (_, k) => report('spammer', spread(k)));
    expect(results.filter((r) => r.candidateId !== null)).toHaveLength(16);
  });
});

describe('input checks', () => {
  it('refuses meaningless options and non-finite times', () => {
    const clock = new ManualClock(T0);
    expect(() => new ConsensusEngine(clock, { quorum: 0 })).toThrow(RangeError);
    expect(() => new ConsensusEngine(clock, { agreement: 1.5 })).toThrow(RangeError);
    expect(() => new ConsensusEngine(clock, { windowMs: -1 })).toThrow(RangeError);
    expect(() => new ConsensusEngine(clock, { maxOpenStartedPerReporter: 0 })).toThrow(RangeError);
    const { report } = setup();
    expect(() => report('r1', { observedAt: Number.NaN })).toThrow(RangeError);
  });

  it('applies partial options over the defaults', () => {
    const { engine, report } = setup({ quorum: 1 });
    expect(engine.options).toMatchObject({ quorum: 1, windowMs: 30_000, agreement: 0.6, activeWindowMs: 120_000, retractAfterMs: 90_000, duplicateWindowMs: 5_000 });
    expect(kinds(report('r1').outcomes)).toEqual(['provisional', 'confirmed']);
  });
});

describe('properties over random streams', () => {
  type Step =
    | { op: 'report'; reporter: number; game: number; team: number; points: number; skew: number; queued: number; advance: number }
    | { op: 'official'; game: number; team: number; points: number; skew: number }
    | { op: 'tick'; advance: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 8, arbitrary: fc.record({ op: fc.constant('report' as const), reporter: fc.nat(6), game: fc.nat(1), team: fc.nat(1), points: fc.integer({ min: 1, max: 2 }), skew: fc.integer({ min: -40_000, max: 5_000 }), queued: fc.nat(3_000), advance: fc.nat(8_000) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('official' as const), game: fc.nat(1), team: fc.nat(1), points: fc.integer({ min: 1, max: 2 }), skew: fc.integer({ min: -40_000, max: 0 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('tick' as const), advance: fc.nat(40_000) }) },
  );

  it('never confirms below quorum unless official, never confirms twice, retracts only what was published', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), fc.integer({ min: 1, max: 4 }), fc.double({ min: 0.3, max: 0.9, noNaN: true }), (steps, quorum, agreement) => {
        const { clock, engine, report } = setup({ quorum, agreement });
        const published = new Set<string>();
        const closed = new Set<string>();
        const check = (outcomes: Outcome[]) => {
          for (const o of outcomes) {
            expect(closed.has(o.candidateId), `${o.kind} after close of ${o.candidateId}`).toBe(false);
            if (o.kind === 'provisional') {
              expect(published.has(o.candidateId)).toBe(false);
              published.add(o.candidateId);
            } else {
              closed.add(o.candidateId);
              if (o.kind === 'retracted') expect(published.has(o.candidateId)).toBe(true);
              else if (!o.official) {
                expect(o.confidence.reporters).toBeGreaterThanOrEqual(quorum);
                expect(o.confidence.agreement).toBeGreaterThanOrEqual(Math.round(agreement * 1000) / 1000 - 0.001);
                expect(o.hadProvisional && published.has(o.candidateId)).toBe(true);
              }
            }
          }
        };
        for (const s of steps) {
          if (s.op === 'tick') {
            clock.advance(s.advance);
            check(engine.tick());
          } else if (s.op === 'official') {
            check(engine.official({ gameId: `g${s.game}`, team: `t${s.team}`, points: s.points, eventType: 'goal', observedAt: clock.now() + s.skew }));
          } else {
            clock.advance(s.advance);
            // `queued`: receipt times out of order, as when a batch waited behind another.
            const receivedAt = clock.now() - s.queued;
            check(report(`r${s.reporter}`, { gameId: `g${s.game}`, team: `t${s.team}`, points: s.points, observedAt: clock.now() + s.skew, receivedAt }).outcomes);
          }
        }
        clock.advance(200_000);
        check(engine.tick());
        expect(engine.openCandidates()).toBe(0);
        clock.advance(engine.options.presenceMs);
        check(engine.tick());
        expect(engine.size()).toEqual({ games: 0, candidates: 0, activeReporters: 0 });
      }),
      { numRuns: 300 },
    );
  });

  it('pops deadlines in time order, only when due', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000 }), { maxLength: 200 }), fc.integer({ min: 0, max: 1_000 }), (times, now) => {
        const heap = new Deadlines<number>();
        for (const t of times) heap.push(t, t);
        const popped: number[] = [];
        for (let t = heap.popDue(now); t !== undefined; t = heap.popDue(now)) popped.push(t);
        expect(popped).toEqual(times.filter((t) => t <= now).sort((a, b) => a - b));
        expect(heap.size).toBe(times.filter((t) => t > now).length);
      }),
    );
  });
});

describe('regressions found by the simulator', () => {
  it('an official play settles the play the crowd confirmed, not a nearer stray candidate', () => {
    const { clock, engine, report } = setup();
    report('r1');
    report('r2');
    expect(kinds(report('r3').outcomes)).toEqual(['confirmed']);
    // r1 reports the same score again 10 s later: a new observation, so a second candidate.
    clock.advance(10_000);
    const stray = report('r1');
    expect(kinds(stray.outcomes)).toEqual(['provisional']);
    // The official play sits nearer the stray, but it is the play the crowd already confirmed.
    expect(engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 + 9_000 })).toEqual([]);
    clock.advance(90_000);
    const later = engine.tick();
    expect(later.map((o) => [o.kind, o.candidateId])).toEqual([['retracted', stray.candidateId]]);
  });

  it('a second real play after a confirmed one still gets its own official confirmation', () => {
    const { clock, engine, report } = setup();
    report('r1');
    report('r2');
    report('r3');
    clock.advance(10_000);
    const second = report('r1');
    expect(engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 })).toEqual([]);
    const out = engine.official({ gameId: 'soccer_1', team: 'BRA', points: 1, eventType: 'goal', observedAt: T0 + 10_000 });
    expect(confirmedOf(out).candidateId).toBe(second.candidateId);
  });

  it('a game going final retracts its open provisionals instead of leaving them unresolved', () => {
    const { engine, report } = setup();
    const open = report('r1');
    const out = engine.forgetGame('soccer_1');
    expect(out.map((o) => [o.kind, o.candidateId])).toEqual([['retracted', open.candidateId]]);
    expect(engine.openCandidates('soccer_1')).toBe(0);
  });
});
