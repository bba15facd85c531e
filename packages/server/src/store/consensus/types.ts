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
}

export interface ReporterRecordTable {
  key_id: string;
  agreed: number;
  disagreed: number;
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
  reporter_records: ReporterRecordTable;
  consensus_leases: ConsensusLeaseTable;
  reporter_suspensions: ReporterSuspensionTable;
}
