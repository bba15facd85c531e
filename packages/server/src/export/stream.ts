import { Readable } from 'node:stream';

/** One page of an export: its lines (already serialised) and whether anything follows. */
export interface Page {
  lines: string[];
  /** Rows read from the database for this page (counted even when a filter drops them). */
  fetched: number;
  done: boolean;
}

/** Pulls pages in export order; it keeps its own keyset position between calls. */
export interface PageSource {
  next(limit: number): Promise<Page>;
}

/** Counters of one app's exports, read by tests (backpressure) and useful for metrics. */
export interface ExportStats {
  rowsFetched: number;
  pagesFetched: number;
  /** Page queries running now: zero while every export is paused or between pages. */
  inFlight: number;
  active: number;
}

/**
 * A page is fetched only when the consumer asks for more (`_read`), and one page is pushed
 * as one chunk. Once the chunks waiting here pass the high-water mark, `push` returns false and
 * Node stops calling `_read` until the HTTP response (or the gzip stream in front of it) has
 * drained: a slow reader leaves the export paused, with at most about one buffer and one page
 * in memory, and no database query in flight.
 */
export const EXPORT_BUFFER_BYTES = 1 << 20;

export class NdjsonStream extends Readable {
  private fetching = false;
  private counted = false;

  constructor(
    private readonly source: PageSource,
    private readonly pageSize: number,
    private readonly stats: ExportStats,
  ) {
    super({ highWaterMark: EXPORT_BUFFER_BYTES });
    stats.active++;
  }

  override _read(): void {
    if (this.fetching) return;
    this.fetching = true;
    this.stats.inFlight++;
    this.source.next(this.pageSize).then(
      (page) => {
        this.fetching = false;
        this.stats.inFlight--;
        if (this.destroyed) return;
        this.stats.rowsFetched += page.fetched;
        this.stats.pagesFetched++;
        if (page.lines.length > 0) this.push(`${page.lines.join('\n')}\n`);
        if (page.done) this.push(null);
        // Nothing pushed means Node will not ask again: fetch the next page now.
        else if (page.lines.length === 0) this._read();
      },
      (err: unknown) => {
        this.fetching = false;
        this.stats.inFlight--;
        this.destroy(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.counted) {
      this.counted = true;
      this.stats.active--;
    }
    callback(err);
  }
}
