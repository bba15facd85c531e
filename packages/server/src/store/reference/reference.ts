import type { Player, RosterEntry, Season, Team, Venue } from '@svc/schema';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ScopeFilter } from '../../domain/scopes.js';
import type { Db } from '../sql/db.js';
import { chunks } from '../sql/batches.js';
import { bool } from '../sql/columns.js';
import { pageOf, stringKey, type Page, type PageRequest } from '../sql/page.js';
import { scopeSql } from '../sql/scope-sql.js';
import type { Database } from '../sql/database.js';
import type { LeagueTable, PlayerTable, RosterTable, SeasonTable, TeamTable, VenueTable } from './types.js';

export const teamRecord = (r: TeamTable): Team => ({
  id: r.id,
  sport: r.sport,
  league: r.league,
  name: r.name,
  code: r.code,
  venue: r.venue_id,
  external_ids: JSON.parse(r.external_ids),
  synthetic: bool(r.synthetic),
});

export const playerRecord = (r: PlayerTable): Player => ({
  id: r.id,
  sport: r.sport,
  league: r.league,
  name: r.name,
  position: r.position,
  external_ids: JSON.parse(r.external_ids),
  synthetic: bool(r.synthetic),
});

export const venueRecord = (r: VenueTable): Venue => ({
  id: r.id,
  name: r.name,
  city: r.city,
  country: r.country,
  geo: r.lat === null || r.lng === null ? null : { lat: r.lat, lng: r.lng },
  capacity: r.capacity,
  synthetic: bool(r.synthetic),
});

type SeasonRow = SeasonTable & { competitions: number; events: number };
export const seasonRecord = (r: SeasonRow): Season => ({
  id: r.id,
  league: r.league,
  sport: r.sport,
  label: r.label,
  start: r.start_date,
  end: r.end_date,
  synthetic: bool(r.synthetic),
  source: r.source,
  competitions: Number(r.competitions),
  events: Number(r.events),
});

/**
 * Inside a transaction that schedules a game on `date`: creates its season when missing, or
 * widens the season's dates to cover `date`.
 */
export async function coverSeason(trx: Transaction<Database>, season: SeasonTable, date: string): Promise<void> {
  const found = await trx.selectFrom('seasons').selectAll().where('id', '=', season.id).executeTakeFirst();
  if (!found) {
    await trx.insertInto('seasons').values(season).execute();
  } else if (found.end_date < date || found.start_date > date) {
    await trx
      .updateTable('seasons')
      .set({ start_date: found.start_date > date ? date : found.start_date, end_date: found.end_date < date ? date : found.end_date })
      .where('id', '=', season.id)
      .execute();
  }
}

/** A season's dates as a batch of new games needs them covered. */
export interface SeasonSpan {
  league: string;
  start: string;
  end: string;
}

/**
 * Inside a transaction that schedules a batch of games (store/reference/archive-load.ts): widens the
 * existing seasons to cover their spans, and returns the missing ones as `newSeason` builds them
 * (given the league's sport), for the caller to insert with the batch.
 */
export async function coverSeasonSpans(
  k: Kysely<Database>,
  spans: ReadonlyMap<string, SeasonSpan>,
  newSeason: (id: string, span: SeasonSpan, sport: string) => SeasonTable,
): Promise<SeasonTable[]> {
  const missing: SeasonTable[] = [];
  for (const [id, s] of spans) {
    const row = await k.selectFrom('seasons').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) {
      const league = await k.selectFrom('leagues').select('sport').where('id', '=', s.league).executeTakeFirst();
      missing.push(newSeason(id, s, league?.sport ?? ''));
      continue;
    }
    const start = s.start < row.start_date ? s.start : row.start_date;
    const end = s.end > row.end_date ? s.end : row.end_date;
    if (start !== row.start_date || end !== row.end_date) {
      await k.updateTable('seasons').set({ start_date: start, end_date: end }).where('id', '=', id).execute();
    }
  }
  return missing;
}

/** The reference rows of a bulk load (store/reference/archive-load.ts). */
export interface ReferenceRows {
  leagues: LeagueTable[];
  venues: VenueTable[];
  teams: TeamTable[];
  players: PlayerTable[];
  rosters: RosterTable[];
  seasons: SeasonTable[];
}

/** Inside a bulk load's transaction: multi-row inserts, each table before the tables that refer to it. */
export async function insertReferenceRows(k: Kysely<Database>, rows: ReferenceRows): Promise<void> {
  for (const c of chunks(rows.leagues)) await k.insertInto('leagues').values(c).execute();
  for (const c of chunks(rows.venues)) await k.insertInto('venues').values(c).execute();
  for (const c of chunks(rows.teams)) await k.insertInto('teams').values(c).execute();
  for (const c of chunks(rows.players)) await k.insertInto('players').values(c).execute();
  for (const c of chunks(rows.rosters)) await k.insertInto('rosters').values(c).execute();
  for (const c of chunks(rows.seasons)) await k.insertInto('seasons').values(c).execute();
}

/** A league's teams, by id. */
export function teamsOfLeague(k: Kysely<Database>, league: string): Promise<{ id: string; code: string; venue_id: string | null }[]> {
  return k.selectFrom('teams').select(['id', 'code', 'venue_id']).where('league', '=', league).orderBy('id').execute();
}

/** The players of these leagues, by id. */
export function playersOfLeagues(k: Kysely<Database>, leagues: readonly string[]): Promise<{ id: string; league: string; position: string | null }[]> {
  return k.selectFrom('players').select(['id', 'league', 'position']).where('league', 'in', [...leagues]).orderBy('id').execute();
}

export type ReferenceTableName = 'leagues' | 'teams' | 'players' | 'venues' | 'seasons';

export async function countReferenceRows(k: Kysely<Database>, table: ReferenceTableName): Promise<number> {
  const row = await k.selectFrom(table).select((eb) => eb.fn.countAll().as('c')).executeTakeFirst();
  return Number(row?.c ?? 0);
}

/** Folds accents and case so `search=muller` finds "Müller". */
export function searchName(name: string): string {
  return name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
}

export class ReferenceRepo {
  constructor(private readonly db: Db) {}

  async listTeams(scope: ScopeFilter, page: PageRequest): Promise<Page<Team>> {
    const after = stringKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('teams')
      .selectAll()
      .where(scopeSql(scope))
      .$if(after !== undefined, (q) => q.where('id', '>', after ?? ''))
      .orderBy('id')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.id], teamRecord);
  }

  async team(id: string): Promise<Team | undefined> {
    const row = await this.db.kysely.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return row && teamRecord(row);
  }

  async listPlayers(
    scope: ScopeFilter,
    f: { team?: string; season?: string; search?: string },
    page: PageRequest,
  ): Promise<Page<Player>> {
    const after = stringKey(page.cursor);
    let q = this.db.kysely.selectFrom('players').selectAll('players').where(scopeSql(scope, 'players'));
    if (f.team || f.season) {
      q = q.where('players.id', 'in', (eb) =>
        eb
          .selectFrom('rosters')
          .select('rosters.player_id')
          .$if(f.team !== undefined, (s) => s.where('rosters.team_id', '=', f.team ?? ''))
          .$if(f.season !== undefined, (s) => s.where('rosters.season_id', '=', f.season ?? '')),
      );
    }
    if (f.search) {
      const needle = `%${searchName(f.search).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`players.search_name like ${needle} escape '\\'`);
    }
    const rows = await q
      .$if(after !== undefined, (s) => s.where('players.id', '>', after ?? ''))
      .orderBy('players.id')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.id], playerRecord);
  }

  async player(id: string): Promise<Player | undefined> {
    const row = await this.db.kysely.selectFrom('players').selectAll().where('id', '=', id).executeTakeFirst();
    return row && playerRecord(row);
  }

  async roster(teamId: string, season: string | undefined, page: PageRequest): Promise<Page<RosterEntry>> {
    const after = stringKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('rosters')
      .innerJoin('players', 'players.id', 'rosters.player_id')
      .select([
        'rosters.team_id',
        'rosters.player_id',
        'rosters.season_id',
        'rosters.jersey',
        'rosters.position',
        'rosters.from_date',
        'rosters.to_date',
        'players.name',
      ])
      .where('rosters.team_id', '=', teamId)
      .$if(season !== undefined, (q) => q.where('rosters.season_id', '=', season ?? ''))
      .$if(after !== undefined, (q) =>
        q.where(sql<boolean>`(rosters.season_id || '|' || rosters.player_id) > ${after ?? ''}`),
      )
      .orderBy(sql`rosters.season_id || '|' || rosters.player_id`)
      .limit(page.limit + 1)
      .execute();
    return pageOf(
      rows,
      page.limit,
      (r) => [`${r.season_id}|${r.player_id}`],
      (r): RosterEntry => ({
        team_id: r.team_id,
        player_id: r.player_id,
        season: r.season_id,
        ...(r.jersey !== null ? { jersey: r.jersey } : {}),
        ...(r.position !== null ? { position: r.position } : {}),
        ...(r.from_date !== null ? { from: r.from_date } : {}),
        ...(r.to_date !== null ? { to: r.to_date } : {}),
        player: { name: r.name },
      }),
    );
  }

  async listVenues(scope: ScopeFilter, page: PageRequest): Promise<Page<Venue>> {
    const after = stringKey(page.cursor);
    const restricted = scope.sports !== null || scope.leagues !== null;
    const rows = await this.db.kysely
      .selectFrom('venues')
      .selectAll('venues')
      .$if(restricted, (q) =>
        q.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('competitions')
              .select('competitions.id')
              .whereRef('competitions.venue_id', '=', 'venues.id')
              .where(scopeSql(scope, 'competitions')),
          ),
        ),
      )
      .$if(after !== undefined, (q) => q.where('venues.id', '>', after ?? ''))
      .orderBy('venues.id')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.id], venueRecord);
  }

  async venue(id: string): Promise<{ venue: Venue; sports: string[]; leagues: string[] } | undefined> {
    const row = await this.db.kysely.selectFrom('venues').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    const uses = await this.db.kysely
      .selectFrom('competitions')
      .select(['sport', 'league'])
      .distinct()
      .where('venue_id', '=', id)
      .execute();
    return { venue: venueRecord(row), sports: uses.map((u) => u.sport), leagues: uses.map((u) => u.league) };
  }

  async listSeasons(scope: ScopeFilter, page: PageRequest): Promise<Page<Season>> {
    const after = stringKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('seasons')
      .selectAll('seasons')
      .select((eb) => [
        eb
          .selectFrom('competitions')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('competitions.season_id', '=', 'seasons.id')
          // Sandbox replays' games and events are their keys' own (docs/replays.md): not the season's.
          .where('competitions.owner_key_id', 'is', null)
          .as('competitions'),
        eb
          .selectFrom('events')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('events.season_id', '=', 'seasons.id')
          // Counted from the index alone, replays' events included: a season's size, not its records.
          .as('events'),
      ])
      .where(scopeSql(scope, 'seasons'))
      .$if(after !== undefined, (q) => q.where('seasons.id', '>', after ?? ''))
      .orderBy('seasons.id')
      .limit(page.limit + 1)
      .execute();
    return pageOf(
      rows,
      page.limit,
      (r) => [r.id],
      (r) => seasonRecord({ ...r, competitions: Number(r.competitions ?? 0), events: Number(r.events ?? 0) }),
    );
  }

  /** Resolves a season given by id (`wc_2022`) or by label (`2022`, with a league). */
  async resolveSeasonIds(season: string, league?: string): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('seasons')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', season), eb('label', '=', season)]))
      .$if(league !== undefined, (q) => q.where('league', '=', league ?? ''))
      .execute();
    return rows.map((r) => r.id);
  }

  /** A league's current season: the latest to start on or before `today`, else its first; undefined without seasons. */
  async currentSeasonId(league: string, today: string): Promise<string | undefined> {
    const started = await this.db.kysely.selectFrom('seasons').select('id').where('league', '=', league).where('start_date', '<=', today).orderBy('start_date', 'desc').limit(1).executeTakeFirst();
    if (started) return started.id;
    return (await this.db.kysely.selectFrom('seasons').select('id').where('league', '=', league).orderBy('start_date').limit(1).executeTakeFirst())?.id;
  }

  async leagues(): Promise<{ id: string; sport: string; name: string; synthetic: number }[]> {
    return this.db.kysely.selectFrom('leagues').selectAll().orderBy('id').execute();
  }

  /** One league's sport, or undefined when there is no such league. */
  async leagueSport(id: string): Promise<string | undefined> {
    return (await this.db.kysely.selectFrom('leagues').select('sport').where('id', '=', id).executeTakeFirst())?.sport;
  }

  /** A league's teams, by id. */
  async teamsOfLeague(league: string): Promise<{ id: string; code: string; venue_id: string | null }[]> {
    return teamsOfLeague(this.db.kysely, league);
  }

  /** Each team's players in its latest season on record, by player id (a team without a roster is absent). */
  async latestRosters(teamIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (teamIds.length === 0) return out;
    const rows = await this.db.kysely
      .selectFrom('rosters')
      .select(['team_id', 'player_id', 'season_id'])
      .where('team_id', 'in', [...teamIds])
      .orderBy('season_id', 'desc')
      .orderBy('player_id')
      .execute();
    const latest = new Map<string, string>();
    for (const r of rows) {
      const season = latest.get(r.team_id) ?? r.season_id;
      latest.set(r.team_id, season);
      if (r.season_id !== season) continue;
      const list = out.get(r.team_id) ?? [];
      list.push(r.player_id);
      out.set(r.team_id, list);
    }
    return out;
  }
}
