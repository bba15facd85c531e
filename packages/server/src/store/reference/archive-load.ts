import { sql, type Kysely } from 'kysely';
import { countCompetitionRows, datesWithGames, insertCompetitionRows, lastGameNumber, lockSchedule, venuesOfLeagues, type CompetitionRows } from './competitions.js';
import type { Db } from '../sql/db.js';
import type { EventFields } from '../events/json.js';
import { countEvents, insertEventRows } from '../events/events.js';
import { insertMeta, metaValue } from '../sql/meta.js';
import { countReferenceRows, coverSeasonSpans, insertReferenceRows, playersOfLeagues, teamsOfLeague, type ReferenceRows, type SeasonSpan } from './reference.js';
import type { Database } from '../sql/database.js';
import type { SeasonTable } from './types.js';

/**
 * The bulk loader's transactions (docs/architecture.md, "Persistence"): the archive's import, its
 * schedule of coming games and the benchmark league. The archive builds rows in memory; here they
 * go in through their owners' batch inserts, each owner's SQL staying in its module, inside one
 * transaction the archive's code runs in without seeing the driver.
 */

/** Held (PostgreSQL) during the import, so two nodes starting together import once. */
const IMPORT_LOCK = 727_000;
/** The `meta` key the import records its version under, in its own transaction. */
const ARCHIVE_VERSION_KEY = 'archive_version';

/** Everything one bulk write inserts, in the order it is inserted (reference data first, events last). */
export interface BulkRows extends ReferenceRows, CompetitionRows {
  events: EventFields[];
}

/** One of the bulk loader's transactions, as the archive's code sees it. */
export class BulkLoad {
  constructor(private readonly k: Kysely<Database>) {}

  /** Inserts every row in batches, each table before the tables that refer to it. */
  async write(rows: BulkRows): Promise<void> {
    await insertReferenceRows(this.k, rows);
    await insertCompetitionRows(this.k, rows);
    await insertEventRows(this.k, rows.events);
  }

  teamsOfLeague(league: string): Promise<{ id: string; code: string; venue_id: string | null }[]> {
    return teamsOfLeague(this.k, league);
  }

  playersOfLeagues(leagues: readonly string[]): Promise<{ id: string; league: string; position: string | null }[]> {
    return playersOfLeagues(this.k, leagues);
  }

  venuesOfLeagues(leagues: readonly string[]): Promise<{ league: string; venue_id: string | null }[]> {
    return venuesOfLeagues(this.k, leagues);
  }

  datesWithGames(sport: string, from: string, to: string): Promise<Set<string>> {
    return datesWithGames(this.k, sport, from, to);
  }

  lastGameNumber(sport: string): Promise<number> {
    return lastGameNumber(this.k, sport);
  }

  /** Widens existing seasons to their spans; returns the missing ones, for `write`. */
  coverSeasons(spans: ReadonlyMap<string, SeasonSpan>, newSeason: (id: string, span: SeasonSpan, sport: string) => SeasonTable): Promise<SeasonTable[]> {
    return coverSeasonSpans(this.k, spans, newSeason);
  }
}

/** The archive version this database imported, if any. */
export function archiveVersion(db: Db): Promise<string | undefined> {
  return metaValue(db.kysely, ARCHIVE_VERSION_KEY);
}

/**
 * Writes the archive and records `version` in one transaction, unless a version is recorded by
 * the time the import lock is held: another process imported meanwhile (false).
 */
export async function loadArchive(db: Db, version: string, rows: BulkRows): Promise<boolean> {
  return db.kysely.transaction().execute(async (trx) => {
    if (db.engine === 'postgres') await sql`select pg_advisory_xact_lock(${IMPORT_LOCK})`.execute(trx);
    if ((await metaValue(trx, ARCHIVE_VERSION_KEY)) !== undefined) return false;
    await new BulkLoad(trx).write(rows);
    await insertMeta(trx, ARCHIVE_VERSION_KEY, version);
    return true;
  });
}

/** Runs `fn` in a transaction of its own: all of its writes or none. */
export function inBulkTransaction<T>(db: Db, fn: (load: BulkLoad) => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute((trx) => fn(new BulkLoad(trx)));
}

/** Runs `fn` in a transaction under the lock every new game is numbered under (store/reference/competitions.ts). */
export function inScheduleTransaction<T>(db: Db, fn: (load: BulkLoad) => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute(async (trx) => {
    await lockSchedule(trx, db.engine);
    return fn(new BulkLoad(trx));
  });
}

/**
 * After a bulk load on PostgreSQL: its statistics describe the tables before it until autovacuum
 * catches up, and plans made meanwhile (benchmarks run right away) would be judged on stale numbers.
 */
export async function analyzeAfterBulkLoad(db: Db): Promise<void> {
  if (db.engine === 'postgres') await sql`analyze competitions, competitors, plays, events`.execute(db.kysely);
}

/** How many rows the tables a bulk load writes hold, each counted by its owner. */
export async function bulkTableCounts(db: Db): Promise<Record<'leagues' | 'teams' | 'players' | 'venues' | 'seasons' | 'competitions' | 'plays' | 'events', number>> {
  const k = db.kysely;
  return {
    leagues: await countReferenceRows(k, 'leagues'),
    teams: await countReferenceRows(k, 'teams'),
    players: await countReferenceRows(k, 'players'),
    venues: await countReferenceRows(k, 'venues'),
    seasons: await countReferenceRows(k, 'seasons'),
    competitions: await countCompetitionRows(k, 'competitions'),
    plays: await countCompetitionRows(k, 'plays'),
    events: await countEvents(k),
  };
}
