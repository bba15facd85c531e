import { APIPromise, type RawResponse } from './api-promise.js';
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, errorFromStatus, parseRetryAfter } from './errors.js';
import { DEFAULT_LOG_LEVEL, isLogLevel, leveled, type Logger, type LogLevel } from './log.js';

/** The package's version; a test keeps it equal to package.json's. */
export const VERSION = '0.1.0';
export const USER_AGENT = `svc-client-node/${VERSION}`;
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;
/** A `Retry-After` longer than this is not waited for: the error goes to the caller instead. */
export const MAX_RETRY_AFTER_S = 60;
const INITIAL_RETRY_DELAY_S = 0.5;
const MAX_RETRY_DELAY_S = 8;

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Defaults to the environment variable `SVC_API_KEY`. */
  apiKey?: string | undefined;
  /** The origin without `/v1`; defaults to `SVC_BASE_URL`, else `http://127.0.0.1:8080`. */
  baseUrl?: string | undefined;
  /** Per attempt, milliseconds; default 60,000. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt for connection errors, timeouts, 408, 429 and 5xx; default 2. */
  maxRetries?: number | undefined;
  /** A fetch implementation (a proxy agent, a test double, a logging wrapper); defaults to the global one. */
  fetch?: Fetch | undefined;
  /** Headers sent with every request; per-request `headers` win over them. */
  defaultHeaders?: Record<string, string> | undefined;
  /** Defaults to the environment variable `SVC_LOG`, else `'warn'` (nothing is logged in normal operation). */
  logLevel?: LogLevel | undefined;
  /** Defaults to `console`. */
  logger?: Logger | undefined;
}

/** The last argument of every method. */
export interface RequestOptions {
  /** Per attempt, milliseconds; overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /** Aborts the call (and its retries) with `APIUserAbortError`. */
  signal?: AbortSignal | undefined;
  /** For POSTs; default a new random key per call, the same on each of its attempts. */
  idempotencyKey?: string | undefined;
  /** Extra headers for this call; they win over `defaultHeaders` and the client's own. */
  headers?: Record<string, string> | undefined;
}

export type Query = Record<string, string | number | boolean | readonly string[] | null | undefined>;

export interface FinalRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query | undefined;
  body?: unknown;
  options?: RequestOptions | undefined;
}

type Env = Record<string, string | undefined>;

function readEnv(name: string): string | undefined {
  // `process` is absent in browsers; bundlers may still define it, so check its shape.
  const env = (globalThis as { process?: { env?: Env } }).process?.env;
  const value = env?.[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Seconds before retry `n` (0-based): 0.5 s doubling up to 8 s, less up to 25 % jitter so that
 * clients failed together do not come back together; never less than the server's
 * `Retry-After` when it sent one.
 */
export function retryDelayS(retry: number, retryAfterS: number | undefined, random: () => number = Math.random): number {
  const backoff = Math.min(INITIAL_RETRY_DELAY_S * 2 ** retry, MAX_RETRY_DELAY_S) * (1 - 0.25 * random());
  return retryAfterS === undefined ? backoff : Math.max(retryAfterS, backoff);
}

export function shouldRetryStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export type RetryDecision = { retry: true; waitS: number } | { retry: false };

/**
 * What to do after an HTTP answer `status` to attempt `retry` (0-based) with `retriesLeft`
 * retries left. The rule is the Python client's too (test/fixtures/retry-after.json): a
 * `Retry-After` within 60 s is waited for (or the backoff, if longer); a longer one is not
 * waited for at all, the error goes to the caller at once.
 */
export function retryDecision(status: number, retryAfterS: number | undefined, retry: number, retriesLeft: number, random: () => number = Math.random): RetryDecision {
  if (!shouldRetryStatus(status) || retriesLeft <= 0) return { retry: false };
  if (retryAfterS !== undefined && retryAfterS > MAX_RETRY_AFTER_S) return { retry: false };
  return { retry: true, waitS: retryDelayS(retry, retryAfterS, random) };
}

export function headersToRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

export function buildQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** Header names are case-insensitive: one entry per name, later sources winning. */
function mergeHeaders(...sources: (Record<string, string> | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of sources) for (const [name, value] of Object.entries(source ?? {})) out[name.toLowerCase()] = value;
  return out;
}

/** One attempt's answer; `text` is undefined only for a streamed success, whose body is left to the caller. */
interface Answer {
  response: Response;
  text: string | undefined;
}

/** HTTP plumbing shared by every resource: auth, retries, timeouts, idempotency keys, errors, logging. */
export class APIClient {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly logLevel: LogLevel;
  protected readonly fetchImpl: Fetch;
  protected readonly log: Logger;
  private readonly defaultHeaders: Record<string, string>;

  constructor(opts: ClientOptions = {}) {
    const apiKey = opts.apiKey ?? readEnv('SVC_API_KEY');
    if (!apiKey) throw new Error('svc: no API key. Pass { apiKey } or set SVC_API_KEY.');
    this.apiKey = apiKey;
    const baseUrl = (opts.baseUrl ?? readEnv('SVC_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    if (/\/v1$/.test(baseUrl)) throw new Error(`svc: baseUrl is the origin without /v1, got ${baseUrl}`);
    this.baseUrl = baseUrl;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!(this.timeoutMs > 0)) throw new RangeError('svc: timeoutMs must be positive');
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) throw new RangeError('svc: maxRetries must be a whole number ≥ 0');
    const f = opts.fetch ?? (globalThis as { fetch?: Fetch }).fetch;
    if (!f) throw new Error('svc: no fetch available; pass { fetch }');
    this.fetchImpl = (input, init) => f(input, init);
    this.defaultHeaders = opts.defaultHeaders ?? {};
    const logger = opts.logger ?? console;
    const fromEnv = readEnv('SVC_LOG')?.toLowerCase();
    if (opts.logLevel !== undefined && !isLogLevel(opts.logLevel)) throw new RangeError(`svc: logLevel must be debug, info, warn, error or off, got ${String(opts.logLevel)}`);
    this.logLevel = opts.logLevel ?? (fromEnv !== undefined && isLogLevel(fromEnv) ? fromEnv : DEFAULT_LOG_LEVEL);
    this.log = leveled(logger, this.logLevel);
    if (opts.logLevel === undefined && fromEnv !== undefined && !isLogLevel(fromEnv)) {
      this.log.warn(`svc: SVC_LOG=${fromEnv} is not a log level (debug, info, warn, error, off); using ${this.logLevel}`);
    }
  }

  protected authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }

  /**
   * One call with its retries. With `stream` the successful Response comes back with its body
   * unread (the timeout then covers the headers only); otherwise the body is read within the
   * timeout and a connection lost while reading it is retried like any other.
   */
  async send(req: FinalRequest, stream: true): Promise<Response>;
  async send(req: FinalRequest, stream?: false): Promise<RawResponse>;
  async send(req: FinalRequest, stream = false): Promise<Response | RawResponse> {
    const opts = req.options ?? {};
    const maxRetries = opts.maxRetries ?? this.maxRetries;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const url = `${this.baseUrl}${req.path}${buildQuery(req.query)}`;
    const headers = mergeHeaders(
      { accept: stream ? 'application/x-ndjson' : 'application/json', 'user-agent': USER_AGENT },
      this.defaultHeaders,
      this.authHeaders(),
      opts.headers,
    );
    let body: string | null = null;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    // Chosen once per call so that every attempt carries the same key: a retry of a write
    // whose answer was lost replays the first answer instead of writing twice.
    if (req.method === 'POST') headers['idempotency-key'] = opts.idempotencyKey ?? headers['idempotency-key'] ?? `svc-ts-${randomId()}`;

    const started = Date.now();
    const what = `${req.method} ${req.path}`;
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = maxRetries - attempt;
      const attemptStarted = Date.now();
      let answer: Answer;
      try {
        answer = await this.attempt(url, { method: req.method, headers, body }, timeoutMs, opts.signal, stream);
      } catch (err) {
        const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        if (err instanceof APIUserAbortError || retriesLeft <= 0) {
          this.log.info(`svc ${what} failed ${Date.now() - started}ms${attemptsNote(attempt)} (${reason})`);
          throw err;
        }
        const waitS = retryDelayS(attempt, undefined);
        this.log.debug(`svc ${what} attempt ${attempt + 1} failed ${Date.now() - attemptStarted}ms (${reason}); retrying in ${waitS.toFixed(2)} s`);
        await sleep(waitS * 1000, opts.signal);
        continue;
      }
      const { response, text } = answer;
      const requestId = response.headers.get('x-request-id') ?? '-';
      if (response.ok) {
        this.log.info(`svc ${what} ${response.status} ${Date.now() - started}ms request_id=${requestId}${attemptsNote(attempt)}`);
        return stream ? response : { response, text: text ?? '' };
      }
      const retryAfter = parseRetryAfter(response.headers.get('retry-after') ?? undefined);
      const decision = retryDecision(response.status, retryAfter, attempt, retriesLeft);
      if (decision.retry) {
        this.log.debug(`svc ${what} attempt ${attempt + 1} ${response.status} ${Date.now() - attemptStarted}ms request_id=${requestId}; retrying in ${decision.waitS.toFixed(2)} s`);
        await sleep(decision.waitS * 1000, opts.signal);
        continue;
      }
      this.log.info(`svc ${what} ${response.status} ${Date.now() - started}ms request_id=${requestId}${attemptsNote(attempt)}`);
      throw errorFromResponse(response, text ?? '');
    }
  }

  private async attempt(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    stream: boolean,
  ): Promise<Answer> {
    if (signal?.aborted) throw new APIUserAbortError();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.fetchImpl(url, { ...init, signal: controller.signal });
      if (stream && res.ok) return { response: res, text: undefined };
      // A success is read from a copy so that `asResponse()` can hand over a body still unread.
      const text = res.ok ? await res.clone().text() : await res.text();
      return { response: res, text };
    } catch (err) {
      if (signal?.aborted) throw new APIUserAbortError();
      if (timedOut) throw new APITimeoutError(`Request timed out after ${timeoutMs} ms.`);
      throw new APIConnectionError(`Connection error: ${describeCause(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A JSON call: the parsed body. */
  json<T>(req: FinalRequest): APIPromise<T> {
    // The trust boundary: bodies are the API's documented records, typed from packages/schema.
    return new APIPromise(this.send(req), (raw): T => JSON.parse(raw.text));
  }

  /** A single-record call: the record inside `{"data": …}`. */
  data<T>(req: FinalRequest): APIPromise<T> {
    return this.json<{ data: T }>(req).map((body) => body.data);
  }
}

const attemptsNote = (attempt: number): string => (attempt > 0 ? ` attempts=${attempt + 1}` : '');

function describeCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
}

export function errorFromResponse(res: Response, text: string): APIError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, say): the status and the text still say what happened.
  }
  return errorFromStatus(res.status, body, text.slice(0, 500) || res.statusText, headersToRecord(res.headers));
}
