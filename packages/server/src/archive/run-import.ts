import { importArchive, type ImportSummary } from './index.js';
import { isoDate, type Clock } from '../domain/clock.js';
import type { Db } from '../store/sql/db.js';

/** Imports the archive for `clock`'s today (at start-up and by `svc import`) and logs one line of what it holds. */
export async function runImport(db: Db, clock: Clock, log: (line: string) => void): Promise<ImportSummary> {
  const summary = await importArchive(db, { today: isoDate(clock.now()), log });
  log(
    `archive: ${summary.competitions} competitions, ${summary.plays} plays, ${summary.events} events, ${summary.teams} teams, ${summary.players} players in ${summary.ms} ms`,
  );
  return summary;
}
