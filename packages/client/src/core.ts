import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, errorFromStatus, parseRetryAfter } from './errors.js';

export const VERSION = '0.1.0';
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
  apiKey?: string;
  /** The origin without `/v1`; defaults to `SVC_BASE_URL`, else `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Per attempt, milliseconds; default 60,000. */
  timeoutMs?: number;
  /** Retries after the first attempt for connection errors, timeouts, 408, 429 and 5xx; default 2. */
  maxRetries?: number;
  /** A fetch implementation; defaults to the global one. */
  fetch?: Fetch;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
}

export interface RequestOptions {
  timeoutMs?: number;
  maxRetries?: number;
  signal?: AbortSignal;
  /** For POSTs; default a new random key per call, the same on each of its attempts. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export type Query = Record<string, string | number | boolean | readonly string[] | null | undefined>;

export interface FinalRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  options?: RequestOptions;
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
 * Seconds before retry `n` (0-based): the server's `Retry-After` when it sent one, never less;
 * otherwise 0.5 s doubling up to 8 s, less up to 25 % jitter so that clients failed together do
 * not come back together.
 */
export function retryDelayS(retry: number, retryAfterS: number | undefined, random: () => number = Math.random): number {
  if (retryAfterS !== undefined) return retryAfterS;
  const base = Math.min(INITIAL_RETRY_DELAY_S * 2 ** retry, MAX_RETRY_DELAY_S);
  return base * (1 - 0.25 * random());
}

export function shouldRetryStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
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

/** HTTP plumbing shared by every resource: auth, retries, timeouts, idempotency keys, errors. */
export class APIClient {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  protected readonly fetchImpl: Fetch;
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
  async send(req: FinalRequest, stream?: false): Promise<BufferedResponse>;
  async send(req: FinalRequest, stream = false): Promise<Response | BufferedResponse> {
    const opts = req.options ?? {};
    const maxRetries = opts.maxRetries ?? this.maxRetries;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const url = `${this.baseUrl}${req.path}${buildQuery(req.query)}`;
    const headers: Record<string, string> = {
      accept: stream ? 'application/x-ndjson' : 'application/json',
      ...this.defaultHeaders,
      ...this.authHeaders(),
      ...opts.headers,
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    // Chosen once per call so that every attempt carries the same key: a retry of a write
    // whose answer was lost replays the first answer instead of writing twice.
    if (req.method === 'POST') headers['idempotency-key'] = opts.idempotencyKey ?? `svc-ts-${randomId()}`;

    for (let attempt = 0; ; attempt++) {
      const retriesLeft = maxRetries - attempt;
      let res: Response | BufferedResponse;
      try {
        res = await this.attempt(url, { method: req.method, headers, body }, timeoutMs, opts.signal, stream);
      } catch (err) {
        if (err instanceof APIUserAbortError || retriesLeft <= 0) throw err;
        await sleep(retryDelayS(attempt, undefined) * 1000, opts.signal);
        continue;
      }
      if (res instanceof Response || res.ok) return res;
      const retryAfter = parseRetryAfter(res.headers.get('retry-after') ?? undefined);
      const retryable = shouldRetryStatus(res.status) && !(retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_S);
      if (retryable && retriesLeft > 0) {
        await sleep(retryDelayS(attempt, retryAfter) * 1000, opts.signal);
        continue;
      }
      throw errorFromResponse(res);
    }
  }

  private async attempt(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    stream: boolean,
  ): Promise<Response | BufferedResponse> {
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
      if (stream && res.ok) return res;
      return { ok: res.ok, status: res.status, statusText: res.statusText, headers: res.headers, text: await res.text() };
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
  async json<T>(req: FinalRequest): Promise<T> {
    const res = await this.send(req);
    // The trust boundary: bodies are the API's documented records, typed from packages/schema.
    const body: T = JSON.parse(res.text);
    return body;
  }

  /** A single-record call: the record inside `{"data": …}`. */
  async data<T>(req: FinalRequest): Promise<T> {
    const body = await this.json<{ data: T }>(req);
    return body.data;
  }
}

/** An answer read in full. */
export interface BufferedResponse {
  ok: boolean;
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

function describeCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
}

export function errorFromResponse(res: { status: number; statusText: string; headers: Headers; text: string }): APIError {
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    // Not JSON (a proxy's HTML page, say): the status and the text still say what happened.
  }
  return errorFromStatus(res.status, body, res.text.slice(0, 500) || res.statusText, headersToRecord(res.headers));
}
