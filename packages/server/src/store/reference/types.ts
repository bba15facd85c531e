/** Reference data, games and their plays as stored. JSON columns are text; booleans are 0/1 integers. */
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
  /** Corrections (migrations/0014-corrections.ts): absent from the archive's plays as they are loaded. */
  event_id?: string | null;
  withdrawn_by?: number | null;
  withdraws?: string | null;
}
export interface ReferenceDatabase {
  leagues: LeagueTable;
  venues: VenueTable;
  teams: TeamTable;
  players: PlayerTable;
  rosters: RosterTable;
  seasons: SeasonTable;
  competitions: CompetitionTable;
  competitors: CompetitorTable;
  plays: PlayTable;
}
