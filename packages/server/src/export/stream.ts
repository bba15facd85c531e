import { Readable } from 'node:stream';
import { nextTurn } from './next-turn.js';

/** One page of an export: its lines (already serialised) and whether anything follows. */
export interface Page {
  /** The page's lines, each ending in a newline, as text or UTF-8 bytes; empty when the page kept none. */
  text: string | Buffer;
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
  /** Exports streaming now, and every export ever started. */
  active: number;
  started: number;
}

/**
 * A page is fetched when the consumer asks for more (`_read`), and one page is pushed as one
 * chunk. Once the chunks waiting here pass the high-water mark, `push` returns false and Node
 * stops calling `_read` until the HTTP response (or the gzip stream in front of it) has drained.
 *
 * Read-ahead of one page: when a page arrives, the query for the next one starts before this
 * one is written, so the database works (PostgreSQL: in its own process) while this thread
 * writes. A slow reader therefore leaves the export paused with at most about one buffer, the
 * page being written and one page read ahead in memory, and no query in flight: the read-ahead
 * finishes on its own and nothing more is read until the reader drains.
 */
export const EXPORT_BUFFER_BYTES = 1 << 20;


export class NdjsonStream extends Readable {
  private reading = false;
  private counted = false;
  /** The next page's query, started before the current page is pushed. */
  private ahead: Promise<Page> | null = null;
  /** The query running now, if any: destroy waits for it so no read outlives the export. */
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly source: PageSource,
    private readonly pageSize: number,
    private readonly stats: ExportStats,
  ) {
    super({ highWaterMark: EXPORT_BUFFER_BYTES });
    stats.active++;
    stats.started++;
  }

  private fetch(): Promise<Page> {
    this.stats.inFlight++;
    // Each page in a turn of its own: a reader that never pushes back (curl on loopback) drains
    // every push at once, and SQLite's synchronous reads would otherwise chain page after page.
    const page = nextTurn()
      .then(() => this.source.next(this.pageSize))
      .then(
        (p) => {
          this.stats.inFlight--;
          this.stats.rowsFetched += p.fetched;
          this.stats.pagesFetched++;
          return p;
        },
        (err: unknown) => {
          this.stats.inFlight--;
          throw err;
        },
      );
    const settled = page.then(
      () => undefined,
      () => undefined,
    );
    this.running = settled;
    void settled.then(() => {
      if (this.running === settled) this.running = null;
    });
    return page;
  }

  override _read(): void {
    if (this.reading) return;
    this.reading = true;
    const page = this.ahead ?? this.fetch();
    this.ahead = null;
    page.then(
      (p) => {
        this.reading = false;
        if (this.destroyed) return;
        if (!p.done) {
          this.ahead = this.fetch();
          // Handled when the next _read takes it; a destroyed stream drops it without a warning.
          this.ahead.catch(() => undefined);
        }
        if (p.text.length > 0) this.push(p.text);
        if (p.done) this.push(null);
        // Nothing pushed means Node will not ask again: take the next page now.
        else if (p.text.length === 0) this._read();
      },
      (err: unknown) => {
        this.reading = false;
        this.destroy(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    const finish = () => {
      if (!this.counted) {
        this.counted = true;
        this.stats.active--;
      }
      callback(err);
    };
    if (this.running) void this.running.then(finish);
    else finish();
  }
}
