import { archiveVersion, bulkTableCounts, loadArchive } from '../store/reference/archive-load.js';
import type { Db } from '../store/sql/db.js';
import { buildFootball } from './import-football.js';
import { sortEvents } from './plays.js';
import { appendRows, emptyRows } from './rows.js';
import { ensureSchedule } from './schedule.js';
import { buildSynthetic } from './synthetic.js';

export { ensureSchedule } from './schedule.js';

/**
 * Bump when the imported data or its shape changes. A database that holds another version
 * keeps its archive (re-importing under live data could renumber games); re-create it to upgrade.
 */
export const ARCHIVE_VERSION = 'svc-archive-1';

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

/**
 * Imports the real football archive and the synthetic leagues once (recorded in `meta`), then
 * makes sure the coming week has scheduled games. Safe to call on every start: a second call
 * only counts rows. Returns the totals now in the database.
 */
export async function importArchive(db: Db, opts: { today: string; log?: (line: string) => void }): Promise<ImportSummary> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const present = await archiveVersion(db);
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
    // False when another process finished the import while this one was reading the files.
    const imported = await loadArchive(db, ARCHIVE_VERSION, rows);
    for (const note of football.notes) log(note);
    if (imported) {
      log(`archive: read and built in ${built - started} ms, written in ${Date.now() - built} ms (${db.engine})`);
    } else log('archive: imported meanwhile by another process');
  }
  const scheduled = await ensureSchedule(db, { today: opts.today });
  if (scheduled > 0) log(`archive: ${scheduled} scheduled competitions created from ${opts.today}`);
  const summary: ImportSummary = { ...(await bulkTableCounts(db)), ms: 0 };
  summary.ms = Date.now() - started;
  return summary;
}
