import type { APIClient, RequestOptions } from './core.js';
import { sleep } from './core.js';
import { PagePromise } from './pagination.js';
import type { Change, ChangePage, ChangesQuery } from './schema.js';

/** `changes.follow()`'s parameters: where to start (a cursor you kept), which types, how long each poll waits. */
export interface FollowParams {
  /** A `next_cursor` or an export's `X-Changes-Cursor`; without it the oldest change kept. */
  since?: string | undefined;
  types?: string | undefined;
  limit?: number | undefined;
  /** Seconds each long poll waits for a change (1–30, default 25). */
  wait?: number | undefined;
}

/**
 * The change feed, followed for ever: `for await (const change of follower)` long-polls
 * `GET /v1/changes` and yields each change in the feed's order. `cursor` is the position after
 * the last whole page yielded: keep it, and pass it as `since` to resume where you stopped (a
 * loop left in the middle of a page sees that page's rest again: at least once, never a gap).
 * `close()` (or the `signal` option) ends the iteration. Errors other than those the client
 * retries by itself (a 410 `cursor_expired`, a revoked key) end it with the error.
 */
export class ChangeFollower implements AsyncIterable<Change> {
  cursor: string | undefined;
  readonly #client: APIClient;
  readonly #params: FollowParams;
  readonly #abort = new AbortController();
  readonly #options: RequestOptions;

  constructor(client: APIClient, params: FollowParams, options: RequestOptions = {}) {
    this.#client = client;
    this.#params = params;
    this.cursor = params.since;
    this.#options = options;
    options.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  close(): void {
    this.#abort.abort();
  }

  get closed(): boolean {
    return this.#abort.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Change> {
    const wait = this.#params.wait ?? 25;
    // A poll is held up to `wait` seconds by the server: give it that beside the usual timeout.
    const timeoutMs = Math.max(this.#options.timeoutMs ?? this.#client.timeoutMs, (wait + 15) * 1000);
    while (!this.closed) {
      let page: ChangePage;
      try {
        page = await this.#client.json<ChangePage>({
          method: 'GET',
          path: '/v1/changes',
          query: { since: this.cursor, types: this.#params.types, limit: this.#params.limit, wait },
          options: { ...this.#options, timeoutMs, signal: this.#abort.signal },
        });
      } catch (err) {
        if (this.closed) return;
        throw err;
      }
      // A page is yielded whole before `cursor` moves past it: a consumer that breaks out in the
      // middle of a page gets its rest again on resume (at least once, never a gap).
      for (const change of page.data) yield change;
      this.cursor = page.next_cursor;
      // An empty answer came back before its wait (a proxy cut it): do not spin.
      if (page.data.length === 0) await sleep(100, this.#abort.signal).catch(() => undefined);
    }
  }
}

/**
 * `GET /v1/changes` (docs/changes.md): `list()` walks the feed from `since` to its present end,
 * page by page; `follow()` keeps going for ever with long polls.
 */
export class Changes {
  readonly #client: APIClient;
  constructor(client: APIClient) {
    this.#client = client;
  }

  /**
   * Every change from `since` (or the oldest kept) to the feed's present end: `for await` over
   * it, or `await` it for the first page. A page's `next_cursor` is where the next one starts.
   */
  list(params: ChangesQuery = {}, options?: RequestOptions): PagePromise<Change> {
    return new PagePromise<Change>((cursor) =>
      this.#client
        .json<ChangePage>({ method: 'GET', path: '/v1/changes', query: { ...params, since: cursor ?? params.since }, options })
        // The feed always answers a cursor; a list ends at the first empty page.
        .map((page) => ({ data: page.data, next_cursor: page.data.length === 0 ? null : page.next_cursor })),
    );
  }

  /** Long-polls for ever from `since`, yielding each change; resume with the follower's `cursor`. */
  follow(params: FollowParams = {}, options?: RequestOptions): ChangeFollower {
    return new ChangeFollower(this.#client, params, options);
  }
}
