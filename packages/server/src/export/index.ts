import path from 'node:path';
import type { Db } from '../store/sql/db.js';
import { ExportRepo } from '../store/events/export.js';
import { ExportCache } from './cache.js';
import type { ExportStats } from './stream.js';

/** The bulk export's parts (docs/decisions.md, "Export"): its reads, the file cache of closed seasons, its counters. */
export interface Exports {
  repo: ExportRepo;
  cache: ExportCache;
  /** What exports have read so far and how many run now (tests and benchmarks read them). */
  stats: ExportStats;
  close(): Promise<void>;
}

export function createExports(db: Db, dataDir: string): Exports {
  const repo = new ExportRepo(db);
  return {
    repo,
    cache: new ExportCache(path.join(dataDir, 'export-cache')),
    stats: { rowsFetched: 0, pagesFetched: 0, inFlight: 0, active: 0, started: 0 },
    close: () => repo.close(),
  };
}
