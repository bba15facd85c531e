import type { Generated } from 'kysely';

/** Events and the change feed's log as stored. */
export interface EventTable {
  seq: Generated<number>;
  type: string;
  tier: string;
  game_id: string;
  competition_id: string;
  sport: string;
  league: string;
  season_id: string;
  team: string;
  event_type: string;
  points: number;
  clock: string | null;
  ts: string;
  agreement: number;
  reporters: number;
  latency_ms: number;
  /** `confidence.probability` (domain/consensus/probability.ts); a retraction's is its provisional's. */
  probability: number;
  provisional_id: string | null;
  retracted_id: string | null;
  /** The event's REST JSON after its `id` (store/events/json.ts): what the bulk export reads. */
  json_tail: string;
  /** Its game's owner key (a sandbox replay's), null for a real game's event: docs/replays.md. */
  owner_key_id: string | null;
  /** A `status` event's fields (docs/schedule.md); null on scoring events. */
  status?: string | null;
  previous_status?: string | null;
  start_time?: string | null;
  reason?: string | null;
}
/** The change feed's log (store/events/changes.ts, docs/changes.md). */
export interface ChangeTable {
  seq: Generated<number>;
  type: string;
  object_id: string;
  sport: string;
  league: string;
  owner_key_id: string | null;
  at: string;
}
export interface ChangesPrunedTable {
  id: number;
  /** Every change up to this seq has been deleted: a cursor before it is 410. */
  through_seq: number;
}
export interface EventDatabase {
  events: EventTable;
  changes: ChangeTable;
  changes_pruned: ChangesPrunedTable;
}
