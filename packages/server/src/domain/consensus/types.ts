import type { Calibration, Evidence } from './probability.js';
import type { RecordDelta } from './weights.js';

/**
 * The ConsensusEngine's public types (`docs/consensus.md`). Times are epoch milliseconds.
 * Others integrate exactly these shapes; change them only additively.
 */

export interface ConsensusOptions {
  /** A report joins a candidate observed at most this long before or after its first observation. */
  windowMs: number;
  /** Distinct reporters a candidate needs before it can be confirmed. */
  quorum: number;
  /** Weighted share of the game's active reporters a candidate needs to be confirmed. */
  agreement: number;
  /** A reporter counts as active on a game for this long after its last report there. */
  activeWindowMs: number;
  /** An unconfirmed candidate is retracted this long after its first report was received. */
  retractAfterMs: number;
  /** A reporter's report observed this close to its own earlier report of the same score is a repeat. */
  duplicateWindowMs: number;
  /** Below this weight a reporter cannot publish a provisional event on its own (default 0.2). */
  minStartWeight?: number;
  /**
   * Open candidates one reporter may have started for one game, team and points (default 16);
   * a report that would start another is absorbed without a candidate.
   */
  maxOpenStartedPerReporter?: number;
  /**
   * A voice that reported on a game this long ago (by receipt) is still present there: its
   * silence is evidence (presence agreement, ghost scores, the probability). Default 2 h, a match.
   */
  presenceMs?: number;
  /** Weighted share of the present voices (silent ones by their recall) a candidate needs to be confirmed (0.6). */
  presenceAgreement?: number;
  /** An unsupported provisional with 2 or more other present voices is retracted this long after its first receipt (25 s). */
  ghostMs?: number;
  /** …or from this long on (10 s) as soon as the silence of the present voices makes a real play unlikely. */
  ghostEarlyMs?: number;
  /** The chance of that silence if the play were real, at or below which it is retracted early (0.1). */
  ghostSilence?: number;
  /** Open candidates nobody else supports that one voice may have per game (2); past that its reports start nothing. */
  maxUnsupportedPerVoice?: number;
  /** The probability's logistic calibration (probability.ts); benchmarks fit and compare others. */
  calibration?: Calibration;
}

export interface ReportIn {
  /**
   * The voter: a key reporting in its own voice (its key id), or a reporter named under a key
   * (`voterId(keyId, reporter)`), which then gives `keyId`.
   */
  reporterId: string;
  /** The key a named reporter reports under; absent (or equal to reporterId) for a key's own voice. */
  keyId?: string;
  gameId: string;
  team: string;
  points: number;
  eventType?: string;
  clock?: string;
  observedAt: number;
  receivedAt: number;
}

export interface OfficialIn {
  gameId: string;
  team: string;
  points: number;
  eventType: string;
  clock?: string;
  observedAt: number;
}

export interface Confidence {
  agreement: number;
  reporters: number;
  latency_ms: number;
  /** The calibrated chance that the play is real (3 decimals; official plays 1). */
  probability: number;
}

/** `at` is clock.now() when the outcome was produced; `evidence`: what its probability was computed from (for calibrating it). */
export type Outcome =
  | { kind: 'provisional'; candidateId: string; gameId: string; team: string; points: number; eventType: string; clock: string | null; at: number; confidence: Confidence; evidence?: Evidence }
  | { kind: 'confirmed'; candidateId: string; gameId: string; team: string; points: number; eventType: string; clock: string | null; at: number; confidence: Confidence; official: boolean; hadProvisional: boolean; evidence?: Evidence }
  | { kind: 'retracted'; candidateId: string; gameId: string; team: string; points: number; at: number; probability: number };

export interface SubmitResult {
  /** The candidate the report joined or started; null when it was ignored as a repeat or absorbed. */
  candidateId: string | null;
  duplicate: boolean;
  /** A repeat: the candidate holding the reporter's earlier vote (its span grew). */
  repeatOf?: string;
  /**
   * It would have started a candidate beyond maxOpenStartedPerReporter, or beyond its voice's
   * maxUnsupportedPerVoice (`flood`): no candidate, no outcome.
   */
  absorbed?: boolean;
  flood?: boolean;
  tier: 'provisional' | 'confirmed';
  outcomes: Outcome[];
}

/** Memory held by the engine; tick() keeps it bounded. */
export interface EngineSize {
  games: number;
  candidates: number;
  activeReporters: number;
}

/**
 * A candidate as the store keeps it, so another engine can take the game over (engine
 * `restoreGame`). Votes: each reporter's observed-time span.
 */
export interface CandidateSnapshot {
  id: string;
  gameId: string;
  team: string;
  points: number;
  firstObservedAt: number;
  firstReceivedAt: number;
  eventType: string | null;
  clock: string | null;
  starter: string | null;
  state: 'open' | 'confirmed' | 'retracted';
  published: boolean;
  official: boolean;
  /** Official data judged its voters (README rule 14). */
  judged: boolean;
  /** The probability its provisional was published with (null: not published). */
  probability: number | null;
  votes: { reporterId: string; keyId?: string; first: number; last: number }[];
}

/** What changed since the last `takeChanges()`: `closed` when it was confirmed or retracted in between. */
export interface CandidateChange {
  candidate: CandidateSnapshot;
  closed: boolean;
}

/** One game's consensus state: its candidates still held and its present voters' latest receipts. */
export interface GameSnapshot {
  gameId: string;
  candidates: CandidateSnapshot[];
  active: { reporterId: string; keyId?: string; receivedAt: number }[];
}

/** A voter's track record moved by `delta` on a game (README rules 7 and 14); `keyId` is the key it reports under. */
export interface RecordMove {
  gameId: string;
  voter: string;
  keyId: string;
  delta: RecordDelta;
}

/** An official verdict's input: a scoring play (and the candidate it matched) or the final play. */
export type VerdictAt = { play: { gameId: string; observedAt: number; matched: string | null } } | { final: true; gameId: string };
