/** An answer read in full: the fetch `Response` (its body still unread) and the body's text. */
export interface RawResponse {
  response: Response;
  text: string;
}

/** What `.withResponse()` gives: the parsed value, the HTTP answer and the server's request id. */
export interface WithResponse<T> {
  data: T;
  response: Response;
  /** The `X-Request-Id` header: quote it when asking about a call. */
  requestId: string | null;
}

/**
 * What every method returns: `await` it for the record, or ask for the HTTP answer around it with
 * `.withResponse()` (record, `Response` and request id) or `.asResponse()` (the `Response` only).
 * The request goes out when the method is called, once, whatever is asked of it afterwards; the
 * body is parsed only when the record is asked for.
 */
export class APIPromise<T> extends Promise<T> {
  readonly #raw: Promise<RawResponse>;
  readonly #parse: (raw: RawResponse) => T;
  #parsed: Promise<T> | undefined;

  constructor(raw: Promise<RawResponse>, parse: (raw: RawResponse) => T) {
    // A Promise to `instanceof` and to `util.types.isPromise`, but its own state is never used:
    // then/catch/finally answer from the call, so the body is parsed only when asked for.
    super(() => undefined);
    this.#raw = raw;
    this.#parse = parse;
  }

  /**
   * The answer as fetch gave it, body unread. Errors still reject as with `await`: a non-2xx
   * answer is an `APIError`, not a `Response`.
   */
  asResponse(): Promise<Response> {
    return this.#raw.then((r) => r.response);
  }

  /** The record together with the answer it came in and its request id. */
  async withResponse(): Promise<WithResponse<T>> {
    const [data, raw] = await Promise.all([this.#value(), this.#raw]);
    return { data, response: raw.response, requestId: raw.response.headers.get('x-request-id') };
  }

  /** The same call with its value transformed (the HTTP answer is shared, not fetched again). */
  map<U>(transform: (value: T) => U): APIPromise<U> {
    return new APIPromise(this.#raw, (raw) => transform(this.#parse(raw)));
  }

  #value(): Promise<T> {
    this.#parsed ??= this.#raw.then(this.#parse);
    return this.#parsed;
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#value().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#value().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#value().finally(onfinally);
  }

}
