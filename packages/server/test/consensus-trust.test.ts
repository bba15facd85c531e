import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { ConsensusEngine, ReporterWeights, type ConsensusOptions, type Outcome, type ReportIn } from '../src/domain/consensus/engine.js';
import { probabilityOf } from '../src/domain/consensus/probability.js';
import { voterId } from '../src/domain/consensus/voters.js';
import { PROBATION_WEIGHT, REDEEM_AFTER, trackRecord, type TrackRecord } from '../src/domain/consensus/weights.js';
import { calibration, runScenarios } from '../../../bench/trust-run.js';
import { CALIBRATION } from '../src/domain/consensus/probability.js';

/**
 * The crowd-trust rules of the consensus engine (domain/consensus/README.md rules 12–18), each on
 * the attack it answers (docs/consensus.md "Threat model"). The engine is pure: a manual clock.
 */
const T0 = Date.parse('2026-06-11T12:00:00.000Z');
const GAME = 'soccer_1';

function setup(options: Partial<ConsensusOptions> = {}, records: Record<string, Partial<TrackRecord>> = {}) {
  const clock = new ManualClock(T0);
  const engine = new ConsensusEngine(clock, options, new ReporterWeights(records));
  /** A key's own voice (`who` = a key id) or a named reporter (`who` = [key, reporter]). */
  const report = (who: string | [string, string], extra: Partial<ReportIn> = {}) => {
    const [reporterId, keyId] = typeof who === 'string' ? [who, undefined] : [voterId(who[0], who[1]), who[0]];
    return engine.submit({ reporterId, keyId, gameId: GAME, team: 'BRA', points: 1, observedAt: clock.now(), receivedAt: clock.now(), ...extra });
  };
  const official = (observedAt = T0, extra: { team?: string; points?: number } = {}) => {
    const res = engine.officialPlay({ gameId: GAME, team: extra.team ?? 'BRA', points: extra.points ?? 1, eventType: 'goal', observedAt });
    engine.judge({ play: { gameId: GAME, observedAt, matched: res.candidateId } });
    return res;
  };
  return { clock, engine, report, official };
}

const kinds = (outcomes: Outcome[]) => outcomes.map((o) => o.kind);
/** A record that official data confirmed `n` plays of: a voice of its own, trusted. */
const veteran = (n = 20): Partial<TrackRecord> => ({ agreed: n, officialConfirmed: n });
const confidenceOf = (o: Outcome | undefined) => {
  if (!o || o.kind === 'retracted') throw new Error(`no published outcome: ${JSON.stringify(o)}`);
  return o.confidence;
};

describe('reporter identity: a key’s reporters without a record are one voice (rule 12)', () => {
  it('a swarm of named reporters neither publishes nor confirms: one voice, whatever its size', () => {
    const { engine, report } = setup();
    for (let i = 0; i < 12; i++) expect(report(['fanapp', `sock${i}`]).outcomes).toEqual([]);
    expect(engine.openCandidates(GAME)).toBe(1);
  });

  it('another key’s voice publishes the candidate; a third key confirms it with 3 voices, not 14', () => {
    const { report } = setup();
    for (let i = 0; i < 12; i++) report(['fanapp', `sock${i}`]);
    const second = report('key_b');
    expect(kinds(second.outcomes)).toEqual(['provisional']);
    expect(confidenceOf(second.outcomes[0]).reporters).toBe(2);
    const third = report('key_c');
    expect(kinds(third.outcomes)).toEqual(['confirmed']);
    expect(confidenceOf(third.outcomes[0]).reporters).toBe(3);
  });

  it('named reporters of two keys publish together', () => {
    const { report } = setup();
    expect(report(['app_a', 'ann']).outcomes).toEqual([]);
    expect(kinds(report(['app_b', 'bob']).outcomes)).toEqual(['provisional']);
  });

  it('a named reporter with a record of its own publishes alone and is a voice of its own', () => {
    const { report } = setup({}, { [voterId('fanapp', 'vet')]: veteran() });
    expect(kinds(report(['fanapp', 'vet']).outcomes)).toEqual(['provisional']);
    report(['fanapp', 'newbie']);
    // The veteran and the key's pool are two voices; a third key completes the quorum.
    expect(kinds(report('key_c').outcomes)).toEqual(['confirmed']);
  });

  it('a key’s own first report still publishes at once (section 4)', () => {
    const { report } = setup();
    expect(kinds(report('key_a').outcomes)).toEqual(['provisional']);
  });

  it('a confirmation credits the pool through the member who voted first only', () => {
    const { clock, engine, report } = setup();
    report(['fanapp', 'first']);
    clock.advance(100);
    report(['fanapp', 'second']);
    report('key_b');
    report('key_c');
    expect(engine.weights.recordOf(voterId('fanapp', 'first')).agreed).toBe(1);
    expect(engine.weights.recordOf(voterId('fanapp', 'second')).agreed).toBe(0);
    expect(engine.weights.earned(voterId('fanapp', 'first'))).toBe(true);
  });
});

describe('flood: at most 2 unsupported open candidates per voice and game (rule 13)', () => {
  const apart = (k: number) => ({ observedAt: T0 - k * 31_000 });

  it('absorbs the third lone invention of a key, and a fourth for the other team', () => {
    const { engine, report } = setup();
    const results = [report('troll', apart(0)), report('troll', apart(1)), report('troll', apart(2)), report('troll', { team: 'ARG' })];
    expect(results.map((r) => r.outcomes.length)).toEqual([1, 1, 0, 0]);
    expect(results.slice(2).every((r) => r.absorbed === true && r.flood === true && r.candidateId === null)).toBe(true);
    expect(engine.openCandidates(GAME)).toBe(2);
    // Another game is not limited.
    expect(report('troll', { gameId: 'soccer_2' }).outcomes).toHaveLength(1);
  });

  it('counts a swarm’s pool as one voice', () => {
    const { report } = setup();
    report(['swarm', 's1'], apart(0));
    report(['swarm', 's2'], apart(1));
    expect(report(['swarm', 's3'], apart(2))).toMatchObject({ absorbed: true, flood: true });
  });

  it('frees a slot when one of them is supported', () => {
    const { report } = setup();
    report('troll', apart(0));
    report('troll', apart(1));
    report('honest', apart(0));
    expect(report('troll', apart(2)).candidateId).not.toBeNull();
  });
});

describe('ghost scores: an unsupported provisional is retracted once those present stay silent (rule 18)', () => {
  it('at 25 s with two other voices present, not a millisecond before', () => {
    const { clock, engine, report } = setup();
    report('h1', { team: 'ARG', observedAt: T0 - 600_000 });
    report('h2', { team: 'ARG', observedAt: T0 - 600_000 });
    clock.advance(600_000);
    engine.tick();
    const ghost = report('troll');
    expect(kinds(ghost.outcomes)).toEqual(['provisional']);
    clock.set(T0 + 600_000 + 24_999);
    expect(engine.tick()).toEqual([]);
    clock.set(T0 + 600_000 + 25_000);
    expect(engine.tick()).toEqual([expect.objectContaining({ kind: 'retracted', candidateId: ghost.candidateId })]);
  });

  it('from 10 s on when those present report reliably', () => {
    const { clock, engine, report } = setup({}, { h1: veteran(), h2: veteran(), h3: veteran() });
    for (const h of ['h1', 'h2', 'h3']) report(h, { team: 'ARG', observedAt: T0 - 600_000 });
    clock.advance(600_000);
    const ghost = report('troll');
    clock.advance(9_999);
    expect(engine.tick()).toEqual([]);
    clock.advance(1);
    expect(engine.tick()).toEqual([expect.objectContaining({ kind: 'retracted', candidateId: ghost.candidateId })]);
  });

  it('at 90 s as before with fewer than two others present, or once someone else supports it', () => {
    const alone = setup();
    alone.report('h1', { team: 'ARG', points: 2 });
    const lone = alone.report('troll');
    alone.clock.advance(89_999);
    expect(alone.engine.tick().filter((o) => o.candidateId === lone.candidateId)).toEqual([]);
    alone.clock.advance(1);
    expect(alone.engine.tick()).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'retracted', candidateId: lone.candidateId })]));

    const backed = setup();
    backed.report('h1', { team: 'ARG' });
    backed.report('h2', { team: 'ARG' });
    backed.report('h3', { team: 'ARG' });
    const first = backed.report('x1');
    backed.report('x2');
    backed.clock.advance(30_000);
    expect(backed.engine.tick().filter((o) => o.candidateId === first.candidateId)).toEqual([]);
  });
});

describe('truth from official data (rules 14 and 15)', () => {
  it('an official play credits its voters, contradicts the crowd candidates it passed, and notes who missed it', () => {
    const { clock, engine, report, official } = setup();
    report('liar', { team: 'ARG' });
    report('bystander', { team: 'ARG', points: 2 });
    clock.advance(60_000);
    report('h1');
    report('h2');
    official(clock.now());
    const w = engine.weights;
    expect(w.recordOf('h1')).toMatchObject({ officialConfirmed: 1, agreed: 1 });
    expect(w.recordOf('liar')).toMatchObject({ officialContradicted: 1, probation: REDEEM_AFTER });
    expect(w.recordOf('bystander')).toMatchObject({ officialContradicted: 1, missed: 1 });
    expect(w.recordOf('liar').missed).toBe(1);
  });

  it('after one contradiction a reporter weighs less than a newcomer and cannot publish alone', () => {
    const { clock, engine, report, official } = setup({}, { sleeper: veteran(30) });
    expect(kinds(report('sleeper', { team: 'ARG' }).outcomes)).toEqual(['provisional']);
    clock.advance(60_000);
    official(clock.now());
    expect(engine.weights.weight('sleeper')).toBeLessThan(engine.weights.weight('newcomer'));
    expect(engine.weights.weight('sleeper')).toBeLessThanOrEqual(PROBATION_WEIGHT);
    clock.advance(60_000);
    expect(report('sleeper').outcomes).toEqual([]);
  });

  it('the final play contradicts every crowd candidate no official play matched, once', () => {
    const { engine, report } = setup();
    const fake = report('troll');
    const judged = engine.judge({ final: true, gameId: GAME });
    expect(judged).toEqual([fake.candidateId]);
    expect(engine.weights.recordOf('troll').officialContradicted).toBe(1);
    expect(engine.judge({ final: true, gameId: GAME })).toEqual([]);
    expect(engine.weights.recordOf('troll').officialContradicted).toBe(1);
  });

  it('judges candidates the engine no longer holds from the store’s copy', () => {
    const { engine } = setup();
    const stored = { id: 'cand_old', gameId: GAME, team: 'BRA', points: 1, firstObservedAt: T0, firstReceivedAt: T0, eventType: null, clock: null, starter: 'old', state: 'retracted' as const, published: true, official: false, judged: false, probability: 0.2, votes: [{ reporterId: 'old', first: T0, last: T0 }] };
    expect(engine.judge({ final: true, gameId: GAME }, [stored])).toEqual(['cand_old']);
    expect(engine.weights.recordOf('old').officialContradicted).toBe(1);
  });

  it('a probation ends after 5 plays confirmed by official data', () => {
    const w = new ReporterWeights({ r: { officialContradicted: 1, probation: REDEEM_AFTER } });
    for (let i = 0; i < REDEEM_AFTER - 1; i++) w.apply('r', { agreed: 1, disagreed: 0, officialConfirmed: 1, officialContradicted: 0, missed: 0 });
    expect(w.demoted('r')).toBe(true);
    w.apply('r', { agreed: 1, disagreed: 0, officialConfirmed: 1, officialContradicted: 0, missed: 0 });
    expect(w.demoted('r')).toBe(false);
  });

  it('a candidate backed only by voices on probation is not confirmed by the crowd', () => {
    const onProbation = trackRecord({ agreed: 30, officialConfirmed: 30, officialContradicted: 1, probation: 3 });
    const { report } = setup({}, { c1: onProbation, c2: onProbation, c3: onProbation });
    report('c1');
    report('c2');
    expect(kinds(report('c3').outcomes)).not.toContain('confirmed');
  });

  it('a known liar’s vote does not count towards the quorum', () => {
    const { report } = setup({}, { liar: { officialContradicted: 4, probation: 5 } });
    report('h1');
    report('liar');
    expect(kinds(report('h2').outcomes)).not.toContain('confirmed');
    expect(kinds(report('h3').outcomes)).toContain('confirmed');
  });
});

describe('presence: voices that reported on the game stay present for 2 h (rule 16)', () => {
  it('three colluding keys do not confirm against three silent reporters present (today’s rules did)', () => {
    const { clock, report } = setup({}, { h1: veteran(), h2: veteran(), h3: veteran() });
    for (const h of ['h1', 'h2', 'h3']) report(h, { team: 'ARG', observedAt: T0 - 600_000 });
    // Ten minutes of quiet: the 2-minute agreement no longer counts them; presence does.
    clock.advance(600_000);
    const outcomes = [...report('c1').outcomes, ...report('c2').outcomes, ...report('c3').outcomes];
    expect(kinds(outcomes)).toEqual(['provisional']);
  });

  it('three sleepers with records as good as the honest crowd’s do not either, while the crowd confirms', () => {
    const records = Object.fromEntries(['h1', 'h2', 'h3', 's1', 's2', 's3'].map((id) => [id, veteran()]));
    const { clock, report } = setup({}, records);
    for (const id of Object.keys(records)) report(id, { team: 'ARG', observedAt: T0 - 600_000 });
    clock.advance(600_000);
    const lie = [...report('s1', { team: 'ARG' }).outcomes, ...report('s2', { team: 'ARG' }).outcomes, ...report('s3', { team: 'ARG' }).outcomes];
    expect(kinds(lie)).not.toContain('confirmed');
    clock.advance(60_000);
    const real: Outcome[] = [];
    for (const id of ['h1', 'h2', 'h3', 's1', 's2', 's3']) real.push(...report(id).outcomes);
    expect(kinds(real)).toContain('confirmed');
  });

  it('a voice that reported the same moment for the other team counts at its full weight', () => {
    const { report } = setup({}, { h1: veteran(), h2: veteran() });
    report('h1');
    report('h2');
    report('f1', { team: 'ARG' });
    report('f2', { team: 'ARG' });
    // Share 1.5 / (1.5 + 2 × 0.95) < 0.6 whatever the rivals' recall.
    expect(kinds(report('f3', { team: 'ARG' }).outcomes)).not.toContain('confirmed');
  });
});

describe('probability (rule 17)', () => {
  it('is within (0, 1) with 3 decimals for the crowd, 1 for an official play, and a retraction carries its provisional’s', () => {
    const { clock, engine, report, official } = setup();
    const first = confidenceOf(report('key_a').outcomes[0]).probability;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1);
    expect(Number(first.toFixed(3))).toBe(first);
    const played = official(T0 + 60_000, { team: 'ARG' });
    expect(confidenceOf(played.outcomes[0]).probability).toBe(1);
    clock.advance(90_000);
    expect(engine.tick()).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'retracted', probability: first })]));
  });

  it('falls as more of the voices present stay silent, and as they stay silent longer', () => {
    const p = (silent: number, ms: number) =>
      probabilityOf({ votes: 0.85, silence: silent * Math.log(1 - 0.9 * Math.min(1, ms / 10_000)), contested: silent / (silent + 1), newcomers: 0, conflict: 0, confirm: 0, voices: 0, liars: 0, alone: 0 });
    expect(p(0, 0)).toBeGreaterThan(p(1, 0));
    expect(p(1, 0)).toBeGreaterThan(p(6, 0));
    for (const silent of [1, 3, 6]) expect(p(silent, 10_000)).toBeLessThanOrEqual(p(silent, 1_000));
  });

  it('stays below 0.9 for sleepers outnumbering a game nobody else has reported on: nobody could have contradicted them', () => {
    // Six reporters official data vetted, lying together on a game before anyone else has reported on it.
    const sleepers = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const { clock, report } = setup({}, Object.fromEntries(sleepers.map((id) => [id, veteran(150)])));
    const lie: Outcome[] = [];
    for (const id of sleepers) {
      lie.push(...report(id).outcomes);
      clock.advance(500);
    }
    const confirmed = lie.find((o) => o.kind === 'confirmed');
    expect(confidenceOf(confirmed).probability).toBeLessThan(0.9);
    expect(confidenceOf(lie.find((o) => o.kind === 'provisional')).probability).toBeLessThan(0.9);
  });

  it('still reaches 0.9 where voices present outside the candidate could have contradicted it and joined it instead', () => {
    const crowd = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
    const { clock, report } = setup({}, Object.fromEntries(crowd.map((id) => [id, veteran(150)])));
    for (const id of crowd) report(id, { team: 'ARG', observedAt: T0 - 600_000 });
    clock.advance(600_000);
    const real: Outcome[] = [];
    for (const id of crowd) {
      real.push(...report(id).outcomes);
      clock.advance(500);
    }
    expect(confidenceOf(real.find((o) => o.kind === 'confirmed')).probability).toBeGreaterThanOrEqual(0.9);
  });

  it('is calibrated against official truth on a fixed seed: expected calibration error ≤ 0.03 and a Brier score below agreement’s', () => {
    // A smaller input than bench/trust.ts's (one crowd size, two attacks) on a seed of its own.
    const rows = runScenarios({ seed: 7, crowds: [6], attacks: ['troll', 'colluders'], calibration: CALIBRATION, model: 'official' });
    const pairs = rows.flatMap((r) => r.now.probabilityPairs);
    const agreement = rows.flatMap((r) => r.now.agreementPairs);
    expect(pairs.length).toBeGreaterThan(1000);
    const p = calibration(pairs);
    expect(p.ece).toBeLessThanOrEqual(0.03);
    expect(p.brier).toBeLessThan(calibration(agreement).brier);
  }, 60_000);
});

describe('probability in a high-scoring game (rules 16 and 17)', () => {
  // Five voices that report every play of a basketball game a few hundred ms apart: the voices
  // that report the next play are not rivals of this one, they report another moment.
  const voices = ['k1', 'k2', 'k3', 'k4', 'k5'];
  const PLAYS = [
    { team: 'BOS', points: 2 },
    { team: 'NYK', points: 3 },
    { team: 'BOS', points: 1 },
    { team: 'NYK', points: 2 },
    { team: 'NYK', points: 2 },
    { team: 'BOS', points: 3 },
  ];

  function confirmedProbabilities(plays: typeof PLAYS, gapMs: number, records: Record<string, Partial<TrackRecord>>): number[] {
    const { clock, engine } = setup({}, records);
    const out: number[] = [];
    for (const play of plays) {
      const observedAt = clock.now();
      for (const id of voices) {
        clock.advance(300);
        for (const o of engine.submit({ reporterId: id, gameId: 'basketball_1', ...play, observedAt, receivedAt: clock.now() }).outcomes) {
          if (o.kind === 'confirmed') out.push(o.confidence.probability);
        }
      }
      clock.advance(gapMs - voices.length * 300);
    }
    return out;
  }

  for (const [name, records] of [
    ['newcomers', {}],
    ['voices official data vetted', Object.fromEntries(voices.map((id) => [id, veteran(40)]))],
  ] as const) {
    it(`gives each play of a run 12 s apart the probability it has alone (${name})`, () => {
      const alone = confirmedProbabilities(PLAYS.slice(0, 1), 12_000, records);
      expect(alone).toHaveLength(1);
      const run = confirmedProbabilities(PLAYS, 12_000, records);
      expect(run).toHaveLength(PLAYS.length);
      for (const p of run) expect(p).toBeGreaterThanOrEqual(alone[0] - 0.02);
    });
  }
});
