import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { ConsensusEngine, type Outcome, type ReportIn } from '../src/domain/consensus/engine.js';
import { CONTRADICTIONS_FLAG, FLOOD_MIN_REPORTS, FLOOD_RATIO, flagReasons, flagged, RETRACTIONS_FLAG, type FlagInput } from '../src/domain/consensus/flags.js';
import { reporterIdOf, splitVoter, voterOfReporterId } from '../src/domain/consensus/reporter-ids.js';

/** The operators' rules without a store: the flag rule, reporter ids, and a suspended voter's votes leaving the engine. */

const T0 = Date.parse('2026-06-11T12:00:00.000Z');
const none: FlagInput = { agreed: 0, disagreed: 0, officialConfirmed: 0, officialContradicted: 0, missed: 0, reports: 0 };

describe('the flag rule', () => {
  it('leaves a newcomer and an honest reporter alone', () => {
    expect(flagReasons(none)).toEqual([]);
    expect(flagged({ ...none, agreed: 40, disagreed: 3, officialConfirmed: 20, reports: 60 })).toBe(false);
  });

  it('flags official contradictions: from the first while they are a fifth of what official data judged, always from the third', () => {
    expect(flagReasons({ ...none, officialContradicted: 1 })).toEqual(['official_contradictions']);
    expect(flagReasons({ ...none, officialContradicted: 1, officialConfirmed: 4 })).toEqual(['official_contradictions']);
    expect(flagReasons({ ...none, officialContradicted: 1, officialConfirmed: 5 })).toEqual([]);
    expect(flagReasons({ ...none, officialContradicted: CONTRADICTIONS_FLAG, officialConfirmed: 500 })).toEqual(['official_contradictions']);
  });

  it('flags repeated retractions once they outnumber confirmations', () => {
    expect(flagReasons({ ...none, disagreed: RETRACTIONS_FLAG - 1 })).toEqual([]);
    expect(flagReasons({ ...none, disagreed: RETRACTIONS_FLAG })).toEqual(['repeated_retractions']);
    expect(flagReasons({ ...none, disagreed: 5, agreed: 5 })).toEqual([]);
    expect(flagReasons({ ...none, disagreed: 6, agreed: 5 })).toEqual(['repeated_retractions']);
  });

  it('flags a reporter sending far more reports than its games had plays, not a few repeats of one goal', () => {
    // One judged play and 29 reports: below the minimum whatever the ratio.
    expect(flagReasons({ ...none, agreed: 1, reports: FLOOD_MIN_REPORTS - 1 })).toEqual([]);
    expect(flagReasons({ ...none, agreed: 1, reports: FLOOD_MIN_REPORTS })).toEqual(['flooding']);
    // Ten reports per play is the limit; plays it missed count among its games' plays.
    expect(flagReasons({ ...none, agreed: 4, disagreed: 1, reports: FLOOD_RATIO * 5 })).toEqual([]);
    expect(flagReasons({ ...none, agreed: 4, disagreed: 1, reports: FLOOD_RATIO * 5 + 1 })).toEqual(['flooding']);
    expect(flagReasons({ ...none, agreed: 4, disagreed: 1, missed: 5, reports: FLOOD_RATIO * 5 + 1 })).toEqual([]);
  });

  it('names every part that marks a reporter', () => {
    expect(flagReasons({ ...none, officialContradicted: 3, disagreed: 4, reports: 500 })).toEqual(['official_contradictions', 'repeated_retractions', 'flooding']);
  });
});

describe('reporter ids', () => {
  it('name a voter, stable and reversible, for a key’s own voice and for a named reporter', () => {
    for (const voter of ['key_4fT8kP2mQ9xZ1cV7', 'key_4fT8kP2mQ9xZ1cV7/fan-8312', 'key_4fT8kP2mQ9xZ1cV7/a/b c', `key_4fT8kP2mQ9xZ1cV7/${'é'.repeat(128)}`, `key_4fT8kP2mQ9xZ1cV7/${'漢'.repeat(128)}`]) {
      const id = reporterIdOf(voter);
      expect(id).toMatch(/^rep_~?[A-Za-z0-9_-]+$/);
      expect(id.length).toBeLessThanOrEqual(405);
      expect(voterOfReporterId(id)).toBe(voter);
    }
    expect(splitVoter('key_abc')).toEqual({ keyId: 'key_abc', reporter: null });
    expect(splitVoter('key_abc/x/y')).toEqual({ keyId: 'key_abc', reporter: 'x/y' });
  });

  it('refuses strings it did not mint', () => {
    const id = reporterIdOf('key_abc/fan');
    for (const bad of ['', 'rep_', 'key_abc', 'rpt_abc', `${id}=`, `${id}!`, reporterIdOf('not-a-key/fan'), `rep_${Buffer.from('key_abc/').toString('base64url')}`]) {
      expect(voterOfReporterId(bad)).toBeUndefined();
    }
  });
});

describe('a suspended voter’s votes leave the engine', () => {
  function setup() {
    const clock = new ManualClock(T0);
    const engine = new ConsensusEngine(clock, {});
    const report = (reporterId: string, extra: Partial<ReportIn> = {}) =>
      engine.submit({ reporterId, gameId: 'soccer_1', team: 'BRA', points: 1, observedAt: clock.now(), receivedAt: clock.now(), ...extra });
    return { clock, engine, report };
  }
  const kinds = (o: Outcome[]) => o.map((x) => x.kind);

  it('retracts a published candidate left without a vote, and moves nobody’s record', () => {
    const { engine, report } = setup();
    engine.trackChanges();
    const r = report('troll');
    engine.takeChanges();
    const { outcomes, withdrawn } = engine.withdrawVoter('troll');
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'retracted', candidateId: r.candidateId })]);
    expect(withdrawn).toEqual(new Map([['soccer_1', [r.candidateId]]]));
    expect(engine.weights.recordOf('troll')).toMatchObject({ agreed: 0, disagreed: 0, officialConfirmed: 0, officialContradicted: 0 });
    const [change] = engine.takeChanges();
    expect(change).toMatchObject({ closed: true, candidate: { id: r.candidateId, state: 'retracted', votes: [] } });
    expect(engine.openCandidates('soccer_1')).toBe(0);
  });

  it('keeps a candidate others back, without the voter, and confirms one it only held back as an active reporter', () => {
    const { clock, engine, report } = setup();
    // Six active reporters: the troll alone on one ARG play, x and y on an earlier one, r1–r3 on BRA.
    const a = report('troll', { team: 'ARG' });
    report('x', { team: 'ARG', observedAt: clock.now() - 60_000 });
    report('y', { team: 'ARG', observedAt: clock.now() - 60_000 });
    const b = report('r1');
    report('r2');
    // BRA has its quorum but 3 of 6 active reporters is 0.5 < 0.6: quorate, not confirmed.
    expect(report('r3').tier).toBe('provisional');
    const { outcomes, withdrawn } = engine.withdrawVoter('troll');
    // Without the troll: 3 of 5 = 0.6, confirmed now; the troll's ARG candidate kept no vote and is retracted.
    expect(kinds(outcomes).sort()).toEqual(['confirmed', 'retracted']);
    expect(outcomes.find((o) => o.kind === 'confirmed')).toMatchObject({ candidateId: b.candidateId, confidence: { agreement: 0.6, reporters: 3 } });
    expect(outcomes.find((o) => o.kind === 'retracted')).toMatchObject({ candidateId: a.candidateId });
    expect(withdrawn.get('soccer_1')).toEqual([a.candidateId]);
  });

  it('takes the vote out of a shared candidate, which then needs another voter to be confirmed', () => {
    const { engine, report } = setup();
    const first = report('r1');
    report('troll');
    const { outcomes, withdrawn } = engine.withdrawVoter('troll');
    expect(outcomes).toEqual([]);
    expect(withdrawn.get('soccer_1')).toEqual([first.candidateId]);
    // r2 makes two voters, not the quorum of three the troll would have completed.
    expect(report('r2').tier).toBe('provisional');
    expect(report('r3').tier).toBe('confirmed');
  });

  describe('a key’s named reporters without records (one voice, docs/consensus.md "Who votes")', () => {
    const named = (report: (id: string, extra?: Partial<ReportIn>) => ReturnType<ConsensusEngine['submit']>, name: string) => report(`key_app/${name}`, { keyId: 'key_app' });

    it('suspending one leaves the others their voice', () => {
      const { engine, report } = setup();
      named(report, 'fan-a');
      named(report, 'fan-b');
      report('x');
      engine.withdrawVoter('key_app/fan-a');
      // fan-b still speaks for the key's newcomers: with x and y, three voices.
      expect(report('y').tier).toBe('confirmed');
    });

    it('suspending the one that spoke last for them leaves the voice of those still voting', () => {
      const { engine, report } = setup();
      named(report, 'fan-b');
      named(report, 'fan-a');
      report('x');
      engine.withdrawVoter('key_app/fan-a');
      expect(report('y')).toMatchObject({ tier: 'confirmed', outcomes: [expect.objectContaining({ confidence: expect.objectContaining({ agreement: 1, reporters: 3 }) })] });
    });

    it('suspending every one of them takes the voice: the play needs another voter', () => {
      const { engine, report } = setup();
      named(report, 'fan-a');
      named(report, 'fan-b');
      report('x');
      engine.withdrawVoter('key_app/fan-a');
      engine.withdrawVoter('key_app/fan-b');
      expect(report('y').tier).toBe('provisional');
      expect(report('z').tier).toBe('confirmed');
    });
  });

  it('leaves decided candidates and other games as they were', () => {
    const { engine, report } = setup();
    report('troll');
    report('r1');
    expect(report('r2').tier).toBe('confirmed');
    const other = report('troll', { gameId: 'soccer_2' });
    const { outcomes, withdrawn } = engine.withdrawVoter('troll', ['soccer_1']);
    expect(outcomes).toEqual([]);
    expect(withdrawn.size).toBe(0);
    expect(engine.openCandidates('soccer_2')).toBe(1);
    expect(engine.withdrawVoter('troll').outcomes).toEqual([expect.objectContaining({ kind: 'retracted', candidateId: other.candidateId })]);
  });
});
