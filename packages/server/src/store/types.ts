import type { Generated } from 'kysely';
import type { StatusDatabase } from './status-types.js';
import type { WebhookDatabase } from './webhook-types.js';
import type { IdempotencyTable } from './idempotency-types.js';
import type { ConsensusDatabase } from './consensus-types.js';

/** Table shapes as stored. JSON columns are text; booleans are 0/1 integers on both engines. */
export interface ApiKeyTable {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  environment: string;
  plan: string;
  products: string;
  sports: string | null;
  leagues: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface LeagueTable {
  id: string;
  sport: string;
  name: string;
  synthetic: number;
}
export interface VenueTable {
  id: string;
  name: string;
  city: string;
  country: string;
  lat: number | null;
  lng: number | null;
  capacity: number | null;
  synthetic: number;
}
export interface TeamTable {
  id: string;
  sport: string;
  league: string;
  name: string;
  code: string;
  venue_id: string | null;
  external_ids: string;
  synthetic: number;
}
export interface PlayerTable {
  id: string;
  sport: string;
  league: string;
  name: string;
  search_name: string;
  position: string | null;
  external_ids: string;
  synthetic: number;
}
export interface RosterTable {
  team_id: string;
  player_id: string;
  season_id: string;
  jersey: number | null;
  position: string | null;
  from_date: string | null;
  to_date: string | null;
}
export interface SeasonTable {
  id: string;
  league: string;
  sport: string;
  label: string;
  start_date: string;
  end_date: string;
  synthetic: number;
  source: string;
}
export interface CompetitionTable {
  id: string;
  sport: string;
  league: string;
  season_id: string;
  n: number;
  date: string;
  start_time: string | null;
  status: string;
  venue_id: string | null;
  name: string | null;
  /** The tournament group of a group-stage game (`Group A`), else null or absent: docs/standings.md. */
  group_name?: string | null;
  synthetic: number;
  source_key: string | null;
  /** The key that owns this game (a sandbox replay's), null or absent for a real game: docs/replays.md. */
  owner_key_id?: string | null;
  /** The first announced start once it moved (docs/schedule.md); null or absent otherwise. */
  original_start_time?: string | null;
  /** Why the last status change was made; null or absent when none was given. */
  status_reason?: string | null;
}
export interface CompetitorTable {
  competition_id: string;
  idx: number;
  entity_type: string;
  entity_id: string;
  role: string;
  score: number;
}
export interface PlayTable {
  competition_id: string;
  seq: number;
  period_unit: string;
  period_num: number;
  period_label: string;
  competitor_id: string;
  player_id: string | null;
  event_type: string;
  points: number;
  clock: string | null;
  state: string;
  source: string;
  ts: string;
  /** Corrections (store/migrations-corrections.ts): absent from the archive's plays as they are loaded. */
  event_id?: string | null;
  withdrawn_by?: number | null;
  withdraws?: string | null;
}
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
  provisional_id: string | null;
  retracted_id: string | null;
  /** The event's REST JSON after its `id` (store/event-json.ts): what the bulk export reads. */
  json_tail: string;
  /** Its game's owner key (a sandbox replay's), null for a real game's event: docs/replays.md. */
  owner_key_id: string | null;
  /** A `status` event's fields (docs/schedule.md); null on scoring events. */
  status?: string | null;
  previous_status?: string | null;
  start_time?: string | null;
  reason?: string | null;
}
/** The change feed's log (store/changes.ts, docs/changes.md). */
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
export interface ReplayTable {
  id: string;
  key_id: string;
  game_id: string;
  competition_id: string;
  source_game_id: string;
  source_competition_id: string;
  speed: number;
  status: string;
  reason: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  driver: string | null;
  driver_until: string | null;
}
export interface MetaTable {
  key: string;
  value: string;
}

export interface Database extends WebhookDatabase, StatusDatabase, ConsensusDatabase {
  idempotency_keys: IdempotencyTable;
  api_keys: ApiKeyTable;
  leagues: LeagueTable;
  venues: VenueTable;
  teams: TeamTable;
  players: PlayerTable;
  rosters: RosterTable;
  seasons: SeasonTable;
  competitions: CompetitionTable;
  competitors: CompetitorTable;
  plays: PlayTable;
  events: EventTable;
  changes: ChangeTable;
  changes_pruned: ChangesPrunedTable;
  reports: ReportTable;
  meta: MetaTable;
  replays: ReplayTable;
}
