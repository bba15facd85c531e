import type { APIPromise, WithResponse } from './api-promise.js';

/** The API's list envelope: `{"data": [...], "next_cursor": "<opaque>" | null}`. */
export interface ListEnvelope<T> {
  data: T[];
  next_cursor: string | null;
}

type FetchPage<T> = (cursor: string | undefined) => APIPromise<ListEnvelope<T>>;

/**
 * One page of a list. `for await (const item of page)` walks this page and every page after it.
 */
export class Page<T> implements AsyncIterable<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
  readonly #fetchPage: FetchPage<T>;

  constructor(envelope: ListEnvelope<T>, fetchPage: FetchPage<T>) {
    this.data = envelope.data;
    this.next_cursor = envelope.next_cursor;
    this.#fetchPage = fetchPage;
  }

  hasNextPage(): boolean {
    return this.next_cursor !== null;
  }

  /** The page after this one; throws when there is none (check `hasNextPage()` first). */
  async getNextPage(): Promise<Page<T>> {
    if (this.next_cursor === null) throw new Error('svc: no next page; check hasNextPage() first');
    return new Page(await this.#fetchPage(this.next_cursor), this.#fetchPage);
  }

  /** This page and each following one. */
  async *iterPages(): AsyncGenerator<Page<T>, void, undefined> {
    yield this;
    let next = this.hasNextPage() ? await this.getNextPage() : null;
    while (next) {
      yield next;
      next = next.hasNextPage() ? await next.getNextPage() : null;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * What every list method returns: `await` it for the first page, or `for await` over it for
 * every item across pages; `.withResponse()` and `.asResponse()` as on every other call give the
 * first page's HTTP answer. The first request goes out when any of these happens, once.
 */
export class PagePromise<T> extends Promise<Page<T>> implements AsyncIterable<T> {
  readonly #fetchPage: FetchPage<T>;
  #first: APIPromise<Page<T>> | undefined;

  constructor(fetchPage: FetchPage<T>) {
    // As APIPromise: a Promise by type and prototype, answering then/catch/finally from the first page.
    super(() => undefined);
    this.#fetchPage = fetchPage;
  }

  #page(): APIPromise<Page<T>> {
    this.#first ??= this.#fetchPage(undefined).map((envelope) => new Page(envelope, this.#fetchPage));
    return this.#first;
  }

  /** The first page with the answer it came in and its request id. */
  withResponse(): Promise<WithResponse<Page<T>>> {
    return this.#page().withResponse();
  }

  /** The first page's answer as fetch gave it, body unread. */
  asResponse(): Promise<Response> {
    return this.#page().asResponse();
  }

  override then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#page().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page().finally(onfinally);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const first = await this.#page();
    yield* first;
  }
}
