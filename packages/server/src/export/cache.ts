import fs from 'node:fs';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { randomBase62 } from '../domain/keys.js';

/**
 * Finished exports of closed seasons, kept as files in the data directory: the NDJSON, and each
 * CSV or Parquet made from it (docs/decisions.md "Export formats"), so a season downloaded again
 * in any format is a file read rather than another encoding.
 *
 * A season is closed when every competition in it is final and dated before today: nothing in
 * it can change any more except by appending events (the event log is append-only), so an
 * events export of a closed season is fully identified by the season and its highest event
 * seq. The key also names the record schema and this cache's format version, so a deployment
 * that changes either never serves an old file. The first full export of a closed season is
 * read from the database as usual and written here as it streams; later ones are a file read.
 * The first CSV or Parquet of it is encoded from the NDJSON (cached or read) and kept the same way.
 * Exports with `from`, `to` or `after`, other entities and open seasons always read the database.
 */
export interface ExportCacheKey {
  league: string;
  seasonIds: readonly string[];
  entity: 'events';
  /** Highest event seq in the season(s): any append moves it. */
  head: number;
  schema: string;
  /** The file's format; `ndjson` when absent. */
  format?: 'ndjson' | 'csv' | 'parquet';
}

/** Bump when the bytes an export writes change in any way the schema name does not capture. */
const FORMAT = 1;

const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');

export class ExportCache {
  constructor(private readonly dir: string) {}

  private stem(k: ExportCacheKey): string {
    const format = k.format === undefined || k.format === 'ndjson' ? '' : `~${k.format}`;
    return `${safe(k.league)}~${k.seasonIds.map(safe).join('+')}~${k.entity}${format}`;
  }

  private file(k: ExportCacheKey): string {
    return path.join(this.dir, `${this.stem(k)}~${k.head}~${safe(k.schema)}~v${FORMAT}.${k.format ?? 'ndjson'}`);
  }

  /** The cached export's path, or null. */
  find(k: ExportCacheKey): string | null {
    const f = this.file(k);
    return fs.existsSync(f) ? f : null;
  }

  /**
   * A pass-through that also writes what flows through it to a temporary file. Only a stream
   * that reaches its end is published (renamed into place, replacing older heads of the same
   * season); an error or a client that goes away leaves nothing behind.
   */
  writer(k: ExportCacheKey): Transform {
    fs.mkdirSync(this.dir, { recursive: true });
    const final = this.file(k);
    const tmp = `${final}.${randomBase62(8)}.tmp`;
    const out = fs.createWriteStream(tmp);
    let failed = false;
    out.on('error', () => {
      failed = true;
    });
    const discard = () => {
      out.destroy();
      fs.rm(tmp, { force: true }, () => undefined);
    };
    return new Transform({
      transform(chunk: Buffer | string, _enc, done: TransformCallback) {
        // The file's backpressure holds the export like the client's does.
        if (failed || out.write(chunk)) done(null, chunk);
        else out.once('drain', () => done(null, chunk));
      },
      flush: (done: TransformCallback) => {
        out.end(() => {
          if (failed) {
            fs.rm(tmp, { force: true }, () => done());
            return;
          }
          fs.rename(tmp, final, (err) => {
            if (err) fs.rm(tmp, { force: true }, () => undefined);
            else this.removeOlder(k, final);
            done();
          });
        });
      },
      destroy(err, done) {
        // Called after flush too; only an unfinished stream still has its temp file open.
        if (!out.closed) discard();
        done(err);
      },
    });
  }

  /** Older heads of the same season and format (the NDJSON's prefix is also its formats' prefix: the extension tells them apart). */
  private removeOlder(k: ExportCacheKey, keep: string): void {
    const prefix = `${this.stem(k)}~`;
    const extension = `.${k.format ?? 'ndjson'}`;
    for (const name of fs.readdirSync(this.dir)) {
      const full = path.join(this.dir, name);
      if (name.startsWith(prefix) && name.endsWith(extension) && full !== keep) fs.rmSync(full, { force: true });
    }
  }
}
