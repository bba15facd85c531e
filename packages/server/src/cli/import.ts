import { importArchive, type ImportSummary } from '../archive/index.js';
import { isoDate, type Clock } from '../domain/clock.js';
import type { Db } from '../store/db.js';

export async function runImport(db: Db, clock: Clock, log: (line: string) => void): Promise<ImportSummary> {
  const summary = await importArchive(db, { today: isoDate(clock.now()), log });
  log(
    `archive: ${summary.competitions} competitions, ${summary.plays} plays, ${summary.events} events, ${summary.teams} teams, ${summary.players} players in ${summary.ms} ms`,
  );
  return summary;
}
