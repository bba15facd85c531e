/** Tables of the stored consensus state (store/migrations/0006-consensus-state.ts). Times are epoch milliseconds. */
export interface ConsensusCandidateTable {
  id: string;
  game_id: string;
  team: string;
  points: number;
  first_observed_at: number;
  first_received_at: number;
  event_type: string | null;
  clock: string | null;
  starter: string | null;
  state: string;
  published: number;
  official: number;
  provisional_event_id: string | null;
  confirmed_event_id: string | null;
  /** Official data judged its voters (migration 0016). */
  judged: number;
  /** The probability its provisional was published with. */
  probability: number | null;
}

/** A voter's track record (store/consensus/reporters.ts; migration 0016). */
export interface ReporterTable {
  /** The voter id: the key id, and the reporter it names after a `/` (domain/consensus/voters.ts). */
  voter: string;
  key_id: string;
  /** The end user a key named; null for the key's own voice. */
  reporter: string | null;
  reports: number;
  agreed: number;
  disagreed: number;
  official_confirmed: number;
  official_contradicted: number;
  missed: number;
  probation: number;
  weight: number;
  last_report_at: string | null;
  created_at: string;
}

export interface ConsensusLeaseTable {
  game_id: string;
  owner: string;
  token: number;
  expires_at: number;
}

export interface ReportTable {
  id: string;
  key_id: string;
  ref: string | null;
  game_id: string;
  team: string;
  points: number;
  event_type: string | null;
  clock: string | null;
  observed_at: string;
  received_at: string;
  event_id: string | null;
  tier: string;
  /** The consensus candidate the report voted for or repeated; null when it started nothing. */
  candidate_id: string | null;
  /** The end user the key reported for (`reporter`); null: the key's own voice. */
  reporter: string | null;
}
/** A suspended voter (store/migrations/0015-reporter-suspensions.ts); times are ISO 8601 UTC. */
export interface ReporterSuspensionTable {
  voter: string;
  key_id: string;
  reporter: string | null;
  suspended_at: string;
}

export interface ConsensusDatabase {
  reports: ReportTable;
  consensus_candidates: ConsensusCandidateTable;
  reporters: ReporterTable;
  consensus_leases: ConsensusLeaseTable;
  reporter_suspensions: ReporterSuspensionTable;
}
