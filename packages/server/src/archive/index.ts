import { sql } from 'kysely';
import type { Db } from '../store/db.js';
import { buildFootball } from './import-football.js';
import { sortEvents } from './plays.js';
import { appendRows, emptyRows, writeRows } from './rows.js';
import { ensureSchedule } from './schedule.js';
import { buildSynthetic } from './synthetic.js';

export { ensureSchedule } from './schedule.js';

/**
 * Bump when the imported data or its shape changes. A database that holds another version
 * keeps its archive (re-importing under live data could renumber games); re-create it to upgrade.
 */
export const ARCHIVE_VERSION = 'svc-archive-1';
const META_KEY = 'archive_version';
/** Held (PostgreSQL) during the import, so two nodes starting together import once. */
const IMPORT_LOCK = 727_000;

export interface ImportSummary {
  leagues: number;
  teams: number;
  players: number;
  venues: number;
  seasons: number;
  competitions: number;
  plays: number;
  events: number;
  ms: number;
}

async function archiveVersion(db: Db['kysely']): Promise<string | undefined> {
  const row = await db.selectFrom('meta').select('value').where('key', '=', META_KEY).executeTakeFirst();
  return row?.value;
}

async function count(db: Db, table: 'leagues' | 'teams' | 'players' | 'venues' | 'seasons' | 'competitions' | 'plays' | 'events'): Promise<number> {
  const row = await db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('c')).executeTakeFirst();
  return Number(row?.c ?? 0);
}

/**
 * Imports the real football archive and the synthetic leagues once (recorded in `meta`), then
 * makes sure the coming week has scheduled games. Safe to call on every start: a second call
 * only counts rows. Returns the totals now in the database.
 */
export async function importArchive(db: Db, opts: { today: string; log?: (line: string) => void }): Promise<ImportSummary> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const present = await archiveVersion(db.kysely);
  if (present === ARCHIVE_VERSION) {
    log(`archive: version ${present} already imported`);
  } else if (present !== undefined) {
    log(`archive: database holds archive ${present}, this build ships ${ARCHIVE_VERSION}; keeping the existing archive (re-create the database to re-import)`);
  } else {
    const football = buildFootball(opts.today);
    const rows = emptyRows();
    appendRows(rows, football.rows);
    appendRows(rows, buildSynthetic(opts.today));
    rows.events = sortEvents(rows.events);
    const built = Date.now();
    const imported = await db.kysely.transaction().execute(async (trx) => {
      if (db.engine === 'postgres') await sql`select pg_advisory_xact_lock(${IMPORT_LOCK})`.execute(trx);
      // Another process may have finished the import while this one was reading the files.
      if ((await archiveVersion(trx)) !== undefined) return false;
      await writeRows(trx, rows);
      await trx.insertInto('meta').values({ key: META_KEY, value: ARCHIVE_VERSION }).execute();
      return true;
    });
    for (const note of football.notes) log(note);
    if (imported) {
      log(`archive: read and built in ${built - started} ms, written in ${Date.now() - built} ms (${db.engine})`);
    } else log('archive: imported meanwhile by another process');
  }
  const scheduled = await ensureSchedule(db, { today: opts.today });
  if (scheduled > 0) log(`archive: ${scheduled} scheduled competitions created from ${opts.today}`);
  const summary: ImportSummary = {
    leagues: await count(db, 'leagues'),
    teams: await count(db, 'teams'),
    players: await count(db, 'players'),
    venues: await count(db, 'venues'),
    seasons: await count(db, 'seasons'),
    competitions: await count(db, 'competitions'),
    plays: await count(db, 'plays'),
    events: await count(db, 'events'),
    ms: 0,
  };
  summary.ms = Date.now() - started;
  return summary;
}
