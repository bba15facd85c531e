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
}

export interface ReportIn {
  reporterId: string;
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
}

/** `at` is clock.now() when the outcome was produced. */
export type Outcome =
  | { kind: 'provisional'; candidateId: string; gameId: string; team: string; points: number; eventType: string; clock: string | null; at: number; confidence: Confidence }
  | { kind: 'confirmed'; candidateId: string; gameId: string; team: string; points: number; eventType: string; clock: string | null; at: number; confidence: Confidence; official: boolean; hadProvisional: boolean }
  | { kind: 'retracted'; candidateId: string; gameId: string; team: string; points: number; at: number };

export interface SubmitResult {
  /** The candidate the report joined or started; null when it was ignored as a repeat or absorbed. */
  candidateId: string | null;
  duplicate: boolean;
  /** A repeat: the candidate holding the reporter's earlier vote (its span grew). */
  repeatOf?: string;
  /** It would have started a candidate beyond maxOpenStartedPerReporter: no candidate, no outcome. */
  absorbed?: boolean;
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
  votes: { reporterId: string; first: number; last: number }[];
}

/** What changed since the last `takeChanges()`: `closed` when it was confirmed or retracted in between. */
export interface CandidateChange {
  candidate: CandidateSnapshot;
  closed: boolean;
}

/** One game's consensus state: its candidates still held and its reporters' latest receipts. */
export interface GameSnapshot {
  gameId: string;
  candidates: CandidateSnapshot[];
  active: { reporterId: string; receivedAt: number }[];
}
