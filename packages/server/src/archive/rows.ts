import type { Kysely } from 'kysely';
import { storedEventRow, type EventFields } from '../store/event-json.js';
import type {
  CompetitionTable,
  CompetitorTable,
  Database,
  LeagueTable,
  PlayTable,
  PlayerTable,
  RosterTable,
  SeasonTable,
  TeamTable,
  VenueTable,
} from '../store/types.js';

/** Everything one import writes, collected in memory first and then inserted in batches. */
export interface Rows {
  leagues: LeagueTable[];
  venues: VenueTable[];
  teams: TeamTable[];
  players: PlayerTable[];
  rosters: RosterTable[];
  seasons: SeasonTable[];
  competitions: CompetitionTable[];
  competitors: CompetitorTable[];
  plays: PlayTable[];
  events: EventFields[];
}

export const emptyRows = (): Rows => ({
  leagues: [],
  venues: [],
  teams: [],
  players: [],
  rosters: [],
  seasons: [],
  competitions: [],
  competitors: [],
  plays: [],
  events: [],
});

/** Appends in a loop: spreading tens of thousands of rows into push() can overflow the stack. */
export function appendRows(into: Rows, from: Rows): void {
  append(into.leagues, from.leagues);
  append(into.venues, from.venues);
  append(into.teams, from.teams);
  append(into.players, from.players);
  append(into.rosters, from.rosters);
  append(into.seasons, from.seasons);
  append(into.competitions, from.competitions);
  append(into.competitors, from.competitors);
  append(into.plays, from.plays);
  append(into.events, from.events);
}

export function append<T>(into: T[], from: readonly T[]): void {
  for (const r of from) into.push(r);
}

// SQLite allows 32766 bound variables per statement and PostgreSQL 65535; stay well below both.
const MAX_VARS = 30_000;
const MAX_ROWS = 500;

function chunks<T extends object>(rows: T[]): T[][] {
  if (rows.length === 0) return [];
  const cols = Object.keys(rows[0]).length;
  const size = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_VARS / cols)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** Inserts every row in dependency order (reference data first, events last). */
export async function writeRows(db: Kysely<Database>, rows: Rows): Promise<void> {
  for (const c of chunks(rows.leagues)) await db.insertInto('leagues').values(c).execute();
  for (const c of chunks(rows.venues)) await db.insertInto('venues').values(c).execute();
  for (const c of chunks(rows.teams)) await db.insertInto('teams').values(c).execute();
  for (const c of chunks(rows.players)) await db.insertInto('players').values(c).execute();
  for (const c of chunks(rows.rosters)) await db.insertInto('rosters').values(c).execute();
  for (const c of chunks(rows.seasons)) await db.insertInto('seasons').values(c).execute();
  for (const c of chunks(rows.competitions)) await db.insertInto('competitions').values(c).execute();
  for (const c of chunks(rows.competitors)) await db.insertInto('competitors').values(c).execute();
  for (const c of chunks(rows.plays)) await db.insertInto('plays').values(c).execute();
  for (const c of chunks(rows.events)) await db.insertInto('events').values(c.map(storedEventRow)).execute();
}
