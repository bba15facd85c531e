/** Tables of the stored consensus state (migrations-consensus.ts). Times are epoch milliseconds. */
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

export interface ConsensusDatabase {
  consensus_candidates: ConsensusCandidateTable;
  reporter_records: ReporterRecordTable;
  consensus_leases: ConsensusLeaseTable;
}
