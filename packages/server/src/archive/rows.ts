import type { BulkRows } from '../store/reference/archive-load.js';

/** Everything one import writes, collected in memory first and then inserted in batches (store/reference/archive-load.ts). */
export type Rows = BulkRows;

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
