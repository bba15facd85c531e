/**
 * A voter's track record and what the rules read from it (README.md rules 7, 8, 12 and 14–16;
 * docs/decisions.md "Crowd trust: the reliability model").
 *
 * - **weight** (agreement, quorum checks): Laplace's rule of succession over the voter's outcomes,
 *   an official verdict counting as well as the crowd's: (A + 1) / (A + D + 2) with A = agreed +
 *   official_confirmed and D = disagreed + 3 × official_contradicted. A newcomer is 0.5; one
 *   crowd miss is not fatal; a score the official record contradicts costs three retractions'
 *   worth, and puts the voter on probation: until it has had `REDEEM_AFTER` plays confirmed by
 *   official data, it weighs at most `PROBATION_WEIGHT` (less than a newcomer) and cannot publish
 *   a provisional alone.
 * - **accuracy** (the probability): one-coin Dawid–Skene, the chance that a play this voter reports
 *   is real, as the posterior mean of a Beta prior (mean `PRIOR_ACCURACY`, `PRIOR_STRENGTH` plays)
 *   updated by the voter's plays official data judged. The crowd's outcomes do not count here:
 *   voters who confirm each other's inventions would vouch for themselves.
 * - **recall** (the silence of present voters): the chance that the voter reports a real play it
 *   was present for, (official_confirmed + 1) / (official_confirmed + missed + 2).
 */
export interface TrackRecord {
  /** Voted for a candidate that was confirmed (by the crowd or an official play). */
  agreed: number;
  /** Voted for a candidate that was retracted. */
  disagreed: number;
  /** Voted for a play an official source recorded. */
  officialConfirmed: number;
  /** Voted for a score the official record does not hold (wrong team, points, or no such play). */
  officialContradicted: number;
  /** Was reporting on the game and did not vote for a play an official source recorded. */
  missed: number;
  /** Official confirmations still needed to end the probation of its last contradiction (0: none). */
  probation: number;
}

/** How a record moves: counts to add. A contradiction (re)starts the probation; confirmations shorten it. */
export type RecordDelta = Omit<TrackRecord, 'probation'>;

export const NEW_RECORD: Readonly<TrackRecord> = Object.freeze({ agreed: 0, disagreed: 0, officialConfirmed: 0, officialContradicted: 0, missed: 0, probation: 0 });
export const NO_DELTA: Readonly<RecordDelta> = Object.freeze({ agreed: 0, disagreed: 0, officialConfirmed: 0, officialContradicted: 0, missed: 0 });

/** What one official contradiction costs in the weight, in crowd retractions. */
export const CONTRADICTION_COST = 3;
/** Official confirmations that end a probation. */
export const REDEEM_AFTER = 5;
/** A voter on probation weighs at most this (a newcomer weighs 0.5). */
export const PROBATION_WEIGHT = 0.25;
/** One-coin Dawid–Skene prior: a newcomer's reports are real with this chance… */
export const PRIOR_ACCURACY = 0.7;
/** …held as firmly as this many judged plays. */
export const PRIOR_STRENGTH = 2;

/** Two moves of one record's counts as one. */
export function addDeltas(a: RecordDelta, b: RecordDelta): RecordDelta {
  return {
    agreed: a.agreed + b.agreed,
    disagreed: a.disagreed + b.disagreed,
    officialConfirmed: a.officialConfirmed + b.officialConfirmed,
    officialContradicted: a.officialContradicted + b.officialContradicted,
    missed: a.missed + b.missed,
  };
}

export function applyDelta(r: TrackRecord, d: RecordDelta): TrackRecord {
  // A contradiction in the same move wins: the probation starts again after it.
  const probation = d.officialContradicted > 0 ? REDEEM_AFTER : Math.max(0, r.probation - d.officialConfirmed);
  return { ...addDeltas(r, d), probation };
}

export function addDelta(a: RecordDelta, b: Partial<RecordDelta>): RecordDelta {
  return {
    agreed: a.agreed + (b.agreed ?? 0),
    disagreed: a.disagreed + (b.disagreed ?? 0),
    officialConfirmed: a.officialConfirmed + (b.officialConfirmed ?? 0),
    officialContradicted: a.officialContradicted + (b.officialContradicted ?? 0),
    missed: a.missed + (b.missed ?? 0),
  };
}

export function weightOf(r: TrackRecord): number {
  const a = r.agreed + r.officialConfirmed;
  const d = r.disagreed + CONTRADICTION_COST * r.officialContradicted;
  const w = (a + 1) / (a + d + 2);
  return r.probation > 0 ? Math.min(w, PROBATION_WEIGHT) : w;
}

export function accuracyOf(r: TrackRecord): number {
  return (r.officialConfirmed + PRIOR_ACCURACY * PRIOR_STRENGTH) / (r.officialConfirmed + r.officialContradicted + PRIOR_STRENGTH);
}

/** Official contradictions that make a voter a known liar, once they are also… */
export const LIAR_CONTRADICTIONS = 2;
/** …more than this share of its plays official data judged. */
export const LIAR_SHARE = 0.25;

/** Most of what official data judged of this voter was contradicted: its votes no longer count towards a quorum (rule 15). */
export const liar = (r: TrackRecord): boolean =>
  r.officialContradicted >= LIAR_CONTRADICTIONS && r.officialContradicted > LIAR_SHARE * (r.officialConfirmed + r.officialContradicted);

/** Official data has confirmed a play it reported: its accuracy rests on truth, not on the crowd alone. */
export const vetted = (r: TrackRecord): boolean => r.officialConfirmed > 0;

export const recallOf = (r: TrackRecord): number => (r.officialConfirmed + 1) / (r.officialConfirmed + r.missed + 2);

/** A voter has earned a record of its own once a play it reported was confirmed (README rule 12). */
export const earned = (r: TrackRecord): boolean => r.agreed + r.officialConfirmed > 0;

/** A whole record from stored or partial counts (absent counts are zero). */
export const trackRecord = (r: Partial<TrackRecord>): TrackRecord => ({ ...NEW_RECORD, ...r });

export const sameRecord = (a: TrackRecord, b: TrackRecord): boolean =>
  a.agreed === b.agreed && a.disagreed === b.disagreed && a.officialConfirmed === b.officialConfirmed && a.officialContradicted === b.officialContradicted && a.missed === b.missed && a.probation === b.probation;

const logit = (p: number): number => Math.log(p / (1 - p));

/** What the rules read of a voter's record, worked out once per move. */
export interface VoterStats {
  readonly record: TrackRecord;
  /** Kept with the counts: these are read for every present voter on every check. */
  readonly weight: number;
  readonly accuracyLogit: number;
  readonly recall: number;
  readonly earned: boolean;
  readonly vetted: boolean;
  readonly demoted: boolean;
  readonly liar: boolean;
}

const entryOf = (record: TrackRecord): VoterStats => ({
  record,
  weight: weightOf(record),
  accuracyLogit: logit(accuracyOf(record)),
  recall: recallOf(record),
  earned: earned(record),
  vetted: vetted(record),
  demoted: record.probation > 0,
  liar: liar(record),
});

const NEWCOMER = entryOf(NEW_RECORD);

export class ReporterWeights {
  private readonly entries = new Map<string, VoterStats>();

  /** `initial` restores a snapshot (e.g. after a restart) so voters keep their standing. */
  constructor(initial: Record<string, Partial<TrackRecord>> = {}) {
    for (const [id, r] of Object.entries(initial)) this.entries.set(id, entryOf(trackRecord(r)));
  }

  /** Everything the rules read of a voter, in one lookup (a newcomer's when none is held). */
  stats(voter: string): VoterStats {
    return this.entries.get(voter) ?? NEWCOMER;
  }

  weight(voter: string): number {
    return (this.entries.get(voter) ?? NEWCOMER).weight;
  }

  /** logit of the voter's one-coin accuracy: the evidence its vote adds to the probability. */
  accuracyLogit(voter: string): number {
    return (this.entries.get(voter) ?? NEWCOMER).accuracyLogit;
  }

  recall(voter: string): number {
    return (this.entries.get(voter) ?? NEWCOMER).recall;
  }

  /** A play it reported was confirmed: it is a voice of its own even when named under a key (rule 12). */
  earned(voter: string): boolean {
    return this.entries.get(voter)?.earned ?? false;
  }

  /** Official data has confirmed a play it reported. */
  vetted(voter: string): boolean {
    return this.entries.get(voter)?.vetted ?? false;
  }

  /** Most of its judged plays were contradicted (rule 15). */
  liar(voter: string): boolean {
    return this.entries.get(voter)?.liar ?? false;
  }

  /** On probation after an official contradiction (rule 15). */
  demoted(voter: string): boolean {
    return this.entries.get(voter)?.demoted ?? false;
  }

  /** agreed: the voter voted for a candidate that was confirmed; false: one that was retracted. */
  record(voter: string, agreed: boolean): void {
    this.apply(voter, agreed ? { ...NO_DELTA, agreed: 1 } : { ...NO_DELTA, disagreed: 1 });
  }

  apply(voter: string, d: RecordDelta): void {
    this.entries.set(voter, entryOf(applyDelta(this.recordOf(voter), d)));
  }

  /** Whether a record is held for this voter (else it counts as a newcomer). */
  has(voter: string): boolean {
    return this.entries.has(voter);
  }

  /** The counts held for a voter (a newcomer's are zero). */
  recordOf(voter: string): TrackRecord {
    return this.entries.get(voter)?.record ?? NEW_RECORD;
  }

  /** Sets a voter's record as stored (a node taking a game over, or a record moved by another node). */
  load(voter: string, r: Partial<TrackRecord>): void {
    this.entries.set(voter, entryOf(trackRecord(r)));
  }

  snapshot(): Record<string, TrackRecord & { weight: number }> {
    const out: Record<string, TrackRecord & { weight: number }> = {};
    for (const [id, e] of this.entries) out[id] = { ...e.record, weight: e.weight };
    return out;
  }
}
