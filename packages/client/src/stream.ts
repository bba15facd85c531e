import { buildQuery, sleep, USER_AGENT } from './core.js';
import { APIConnectionError, APIError, AuthenticationError, RateLimitError, SchemaMismatchError, errorFromStatus, parseRetryAfter } from './errors.js';
import { EVENT_SCHEMA, STREAM_CLOSE_CODES, type StreamQuery, type SubscribedFrame, type WireEvent } from './schema.js';

type ListParam = 'sport' | 'league' | 'game';
/** The query of `GET /v1/stream`; `sport`, `league` and `game` also take arrays. The key travels apart. */
export type StreamParams = {
  [K in Exclude<keyof StreamQuery, 'access_token' | 'token'>]?: (K extends ListParam ? StreamQuery[K] | readonly string[] : StreamQuery[K]) | undefined;
};

/** The server sends a heartbeat after this much silence (docs/stream.md). */
export const HEARTBEAT_MS = 5_000;
const CONTROL_TYPES = new Set(['subscribed', 'heartbeat', 'pong', 'error', 'close']);
/** The names of the messages of an event stream: event types and control frames (docs/stream.md). */
const SSE_NAMES = ['subscribed', 'error', 'close', 'score', 'score_retracted', 'status'];
const MAX_RECONNECT_DELAY_MS = 10_000;

/** A WebSocket constructor of the standard (browser) API. */
export type WebSocketConstructor = new (url: string) => StandardWebSocket;
export interface StandardWebSocket {
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (ev: { code: number; reason: string }) => void): void;
  close(code?: number, reason?: string): void;
}

/** An EventSource constructor of the standard (browser) API. */
export type EventSourceConstructor = new (url: string) => StandardEventSource;
export interface StandardEventSource {
  addEventListener(type: string, listener: (ev: { data?: unknown }) => void): void;
  close(): void;
}

/** A stream token, or what fetches a fresh one (from your back end) whenever the stream needs one. */
export type StreamTokenSource = string | (() => string | Promise<string>);

export interface StreamOptions {
  /**
   * Authenticate with a stream token (`sst_…`, minted by a back end with `svc.stream.tokens.create()`)
   * instead of the API key: what a browser page does. A function is called for each connection,
   * so a token that expired is replaced and the stream resumes with nothing lost.
   */
  token?: StreamTokenSource | undefined;
  /** `websocket` (default) or `sse` (server-sent events, through `EventSource`). */
  transport?: 'websocket' | 'sse' | undefined;
  /** A standard EventSource constructor; defaults to the global one (browsers). */
  EventSource?: EventSourceConstructor | undefined;
  /** Silence after which the link counts as dead and is replaced; default 2 × the 5 s heartbeat. */
  deadAfterMs?: number | undefined;
  /** Events buffered before the client stops reading the socket (Node); default 10,000. */
  highWaterMark?: number | undefined;
  /** Reconnections in a row without a successful subscription before giving up; default unlimited. */
  maxReconnects?: number | undefined;
  /**
   * Called when the server could not replay everything after the last event (it keeps 24 h and
   * at most 10,000 events): events between `lastEventId` and the next one may be missing.
   */
  onGap?: ((lastEventId: string) => void) | undefined;
  /** Called on each `subscribed` frame: the link is up (again) and live events follow. */
  onSubscribed?: ((frame: SubscribedFrame) => void) | undefined;
  /** A standard WebSocket constructor; on Node the client uses `ws` (header auth) by default. */
  WebSocket?: WebSocketConstructor | undefined;
}

/** What the stream needs from the client that made it. */
export interface StreamHost {
  /** Absent for a page that only holds a stream token. */
  apiKey?: string | undefined;
  baseUrl: string;
  /** Browsers cannot see why an upgrade was refused; this asks the REST API (401/403) instead. */
  probeAccess(): Promise<void>;
}

interface Link {
  close(code?: number): void;
  terminate(): void;
  pause(): void;
  resume(): void;
}

interface LinkHandlers {
  open(): void;
  message(text: string): void;
  /** Refused before the upgrade, with the HTTP answer (Node only). */
  refused(status: number, headers: Record<string, string>, body: string): void;
  closed(code: number, reason: string): void;
}

// Typed from the import itself: the ESM and CommonJS builds see `ws`'s namespace differently.
const importWs = () => import('ws');
type WsModule = Awaited<ReturnType<typeof importWs>>;
let wsModule: Promise<WsModule | null> | undefined;
function loadWs(): Promise<WsModule | null> {
  const isNode = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';
  wsModule ??= isNode ? importWs().catch(() => null) : Promise.resolve(null);
  return wsModule;
}

/**
 * A frame that is not a control frame and carries `schema: svc.event.v1` and an id is an event
 * of that schema: the server writes it from the same record type.
 */
function isWireEvent(frame: Record<string, unknown>): frame is Record<string, unknown> & WireEvent {
  return frame.schema === EVENT_SCHEMA && typeof frame.id === 'string';
}

function isSubscribedFrame(frame: Record<string, unknown>): frame is Record<string, unknown> & SubscribedFrame {
  return frame.type === 'subscribed' && typeof frame.recovered === 'boolean' && Array.isArray(frame.sports) && Array.isArray(frame.leagues) && Array.isArray(frame.games);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Event ids sort by their zero-padded sequence number; longer means later. */
export function compareEventIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `GET /v1/stream` as an async iterable of events. Control frames are handled here; the link
 * is re-established with `since=<last id>` after a drop, a restart, a 4008 or 2 × heartbeat of
 * silence, and events at or before the last one yielded are skipped, so each arrives once and in
 * order. 401/403 refusals, 4029 and 4401 end the iteration with a typed error instead of a retry
 * loop; 4429 resumes after the `retry_after` the server sent.
 */
export class EventStream implements AsyncIterable<WireEvent> {
  readonly #host: StreamHost;
  readonly #params: StreamParams;
  readonly #opts: { deadAfterMs: number; highWaterMark: number; maxReconnects: number } & StreamOptions;
  #lastEventId: string | undefined;
  #queue: WireEvent[] = [];
  #head = 0;
  #waiter: { resolve: (r: IteratorResult<WireEvent>) => void; reject: (e: unknown) => void } | null = null;
  #failure: unknown = undefined;
  #closed = false;
  #started = false;
  #link: Link | null = null;
  #paused = false;
  #reconnects = 0;
  #deadTimer: ReturnType<typeof setTimeout> | undefined;
  #lastFrameAt = 0;

  constructor(host: StreamHost, params: StreamParams = {}, opts: StreamOptions = {}) {
    this.#host = host;
    this.#params = params;
    // `??`, not a spread: an option given as undefined keeps its default.
    // An event stream's keep-alive is a comment, which EventSource does not surface: its link is
    // watched by EventSource itself unless a deadAfterMs is given.
    this.#opts = { ...opts, deadAfterMs: opts.deadAfterMs ?? (opts.transport === 'sse' ? Infinity : 2 * HEARTBEAT_MS), highWaterMark: opts.highWaterMark ?? 10_000, maxReconnects: opts.maxReconnects ?? Infinity };
    this.#lastEventId = params.since;
  }

  /** The id of the last event yielded (or the `since` given): resume a later stream from it. */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** Ends the stream: a pending `next()` resolves as done and the socket closes. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#deadTimer);
    this.#link?.close(1000);
    this.#link = null;
    this.#queue = [];
    this.#head = 0;
    this.#wake();
  }

  [Symbol.asyncIterator](): AsyncIterator<WireEvent> {
    return {
      next: () => this.#next(),
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #next(): Promise<IteratorResult<WireEvent>> {
    if (!this.#started) {
      this.#started = true;
      void this.#connect();
    }
    if (this.#head < this.#queue.length) {
      const value = this.#queue[this.#head++];
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      if (this.#paused && this.#queue.length - this.#head < this.#opts.highWaterMark / 2) {
        this.#paused = false;
        this.#link?.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      this.#closed = true;
      return Promise.reject(failure);
    }
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  #wake(): void {
    const w = this.#waiter;
    if (!w) return;
    this.#waiter = null;
    if (this.#head < this.#queue.length || this.#failure !== undefined || this.#closed) {
      this.#next().then(w.resolve, w.reject);
    } else this.#waiter = w;
  }

  #fail(err: unknown): void {
    if (this.#closed) return;
    this.#failure = err;
    clearTimeout(this.#deadTimer);
    this.#link?.close(1000);
    this.#link = null;
    this.#wake();
  }

  #url(token: string | undefined): string {
    const { sport, league, game, tier, delay, min_probability } = this.#params;
    const origin = this.#opts.transport === 'sse' ? this.#host.baseUrl : this.#host.baseUrl.replace(/^http/, 'ws');
    return `${origin}/v1/stream${buildQuery({ sport, league, game, tier, delay, min_probability, since: this.#lastEventId, token })}`;
  }

  async #token(): Promise<string | undefined> {
    const source = this.#opts.token;
    return typeof source === 'function' ? await source() : source;
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    let subscribed = false;
    let opened = false;
    // A refused upgrade is followed by a close of the half-made socket; the refusal decides.
    let wasRefused = false;
    // A `rate_limited` error frame precedes a 4429 close and says how long to wait.
    let retryAfterS: number | undefined;
    const handlers: LinkHandlers = {
      open: () => {
        opened = true;
        this.#armDeadTimer();
      },
      message: (text) => {
        this.#lastFrameAt = Date.now();
        let frame: unknown;
        try {
          frame = JSON.parse(text);
        } catch {
          return;
        }
        if (!isRecord(frame)) return;
        if (typeof frame.type === 'string' && CONTROL_TYPES.has(frame.type) && frame.schema === undefined) {
          if (frame.type === 'error' && frame.code === 'rate_limited' && typeof frame.retry_after === 'number') retryAfterS = frame.retry_after;
          if (frame.type === 'subscribed') {
            subscribed = true;
            this.#reconnects = 0;
            if (frame.recovered === false && this.#lastEventId !== undefined) this.#opts.onGap?.(this.#lastEventId);
            if (isSubscribedFrame(frame)) this.#opts.onSubscribed?.(frame);
          }
          return;
        }
        this.#onEvent(frame);
      },
      refused: (status, headers, body) => {
        wasRefused = true;
        let detail: unknown;
        try {
          detail = JSON.parse(body);
        } catch {
          detail = undefined;
        }
        const err = errorFromStatus(status, detail, body.slice(0, 500), headers);
        this.#link?.terminate();
        this.#link = null;
        // Server-side trouble and request-rate limits pass; a wrong key, product or parameter does not.
        if (status === 408 || status === 429 || status >= 500) this.#reconnect(false, parseRetryAfter(headers['retry-after']));
        else this.#fail(err);
      },
      closed: (code, reason) => {
        if (wasRefused) return;
        if (this.#closed || this.#failure !== undefined) return;
        this.#link = null;
        clearTimeout(this.#deadTimer);
        if (code === STREAM_CLOSE_CODES.connection_limit) {
          this.#fail(new RateLimitError(undefined, { type: 'rate_limit_error', message: reason || 'connection limit of the plan reached' }, undefined, {}));
          return;
        }
        if (code === STREAM_CLOSE_CODES.token_expired) {
          // A function gives a fresh token for the next connection; a fixed token cannot be renewed.
          if (typeof this.#opts.token === 'function') this.#reconnect(true);
          else this.#fail(new AuthenticationError(401, { type: 'authentication_error', code: 'token_expired', message: 'The stream token expired; mint another.', request_id: '' }, undefined, {}));
          return;
        }
        if (code === STREAM_CLOSE_CODES.key_revoked) {
          // The key itself is gone: reconnecting with it could only be refused.
          this.#fail(new AuthenticationError(401, { type: 'authentication_error', code: 'invalid_api_key', message: 'The API key was revoked while the stream was open.', request_id: '' }, undefined, {}));
          return;
        }
        if (code === STREAM_CLOSE_CODES.rate_limited) {
          this.#reconnect(subscribed, retryAfterS ?? 1);
          return;
        }
        if (!opened && !this.#usesWs && this.#host.apiKey !== undefined && this.#opts.token === undefined) {
          // A browser hides why the upgrade failed: a bad key or a missing product would loop forever.
          this.#host.probeAccess().then(
            () => this.#reconnect(subscribed),
            (err: unknown) => (err instanceof APIError && (err.status === 401 || err.status === 403) ? this.#fail(err) : this.#reconnect(subscribed)),
          );
          return;
        }
        this.#reconnect(subscribed);
      },
    };
    try {
      const link = await this.#open(handlers);
      // close() may have come while `ws` was loading.
      if (this.#closed) link.close(1000);
      else this.#link = link;
    } catch (err) {
      this.#fail(err instanceof Error ? err : new APIConnectionError(String(err)));
    }
  }

  #usesWs = false;

  async #open(h: LinkHandlers): Promise<Link> {
    const token = await this.#token();
    const apiKey = token === undefined ? this.#host.apiKey : undefined;
    if (token === undefined && apiKey === undefined) throw new APIConnectionError('stream: pass an API key to the client or { token } to the stream');
    const url = this.#url(token);
    if (this.#opts.transport === 'sse') return this.#openEventSource(url, apiKey, h);
    const Custom = this.#opts.WebSocket;
    const ws = Custom ? null : await loadWs();
    if (ws) {
      this.#usesWs = true;
      const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}) };
      const sock = new ws.WebSocket(url, { headers, perMessageDeflate: false });
      sock.on('open', h.open);
      sock.on('message', (data, isBinary) => {
        if (!isBinary) h.message(data.toString());
      });
      sock.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers[k] = v;
          h.refused(res.statusCode ?? 0, headers, Buffer.concat(chunks).toString());
          res.destroy();
        });
        res.on('error', () => h.closed(1006, ''));
      });
      // Errors are followed by 'close' (or were an unexpected response), which decides what next.
      sock.on('error', () => undefined);
      sock.on('close', (code, reason) => h.closed(code, reason.toString()));
      return {
        close: (code) => sock.close(code),
        terminate: () => sock.terminate(),
        pause: () => sock.pause(),
        resume: () => sock.resume(),
      };
    }
    const Ctor = Custom ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Ctor) throw new APIConnectionError('no WebSocket implementation: install `ws` or pass { WebSocket }');
    // Browsers cannot set headers on a WebSocket: a token is in the query already, a key goes there too
    // (for trusted pages only: a public page uses a token, docs/stream.md).
    const sock = new Ctor(apiKey === undefined ? url : `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(apiKey)}`);
    sock.addEventListener('open', h.open);
    sock.addEventListener('message', (ev) => {
      if (typeof ev.data === 'string') h.message(ev.data);
    });
    // A browser reports a failed socket as 'error' then 'close'; the close decides what next.
    sock.addEventListener('error', () => undefined);
    sock.addEventListener('close', (ev) => h.closed(ev.code, ev.reason));
    return {
      close: (code) => sock.close(code),
      terminate: () => sock.close(),
      pause: () => undefined,
      resume: () => undefined,
    };
  }

  /**
   * The event stream through a standard EventSource. Its own reconnection is not used: on a
   * dropped connection it is closed and this stream reconnects with `since`, as for a WebSocket,
   * so both transports resume the same way. A `close` frame carries the WebSocket close code.
   */
  #openEventSource(url: string, apiKey: string | undefined, h: LinkHandlers): Link {
    const Ctor = this.#opts.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
    if (!Ctor) throw new APIConnectionError('no EventSource implementation: pass { EventSource } (e.g. from the `eventsource` package)');
    const es = new Ctor(apiKey === undefined ? url : `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(apiKey)}`);
    let done = false;
    const end = (code: number, reason: string) => {
      if (done) return;
      done = true;
      es.close();
      h.closed(code, reason);
    };
    es.addEventListener('open', () => h.open());
    for (const name of SSE_NAMES) {
      es.addEventListener(name, (ev) => {
        if (typeof ev.data !== 'string') {
          // EventSource's own `error`: the connection failed or dropped.
          if (name === 'error') end(1006, '');
          return;
        }
        if (name === 'close') {
          let frame: unknown;
          try {
            frame = JSON.parse(ev.data);
          } catch {
            frame = undefined;
          }
          end(isRecord(frame) && typeof frame.code === 'number' ? frame.code : 1006, isRecord(frame) && typeof frame.reason === 'string' ? frame.reason : '');
          return;
        }
        h.message(ev.data);
      });
    }
    // EventSource has no flow control: pausing is the queue's high-water mark alone.
    return { close: () => end(1000, ''), terminate: () => end(1006, ''), pause: () => undefined, resume: () => undefined };
  }

  #onEvent(frame: Record<string, unknown>): void {
    const schema = 'schema' in frame ? frame.schema : undefined;
    if (schema !== EVENT_SCHEMA) {
      this.#fail(new SchemaMismatchError(EVENT_SCHEMA, schema));
      return;
    }
    if (!isWireEvent(frame)) return;
    const event = frame;
    if (this.#lastEventId !== undefined && compareEventIds(event.id, this.#lastEventId) <= 0) return;
    this.#lastEventId = event.id;
    this.#queue.push(event);
    if (!this.#paused && this.#queue.length - this.#head >= this.#opts.highWaterMark) {
      this.#paused = true;
      this.#link?.pause();
    }
    this.#wake();
  }

  #armDeadTimer(): void {
    clearTimeout(this.#deadTimer);
    this.#lastFrameAt = Date.now();
    const check = () => {
      const silent = Date.now() - this.#lastFrameAt;
      // While paused by us the server is not silent, we are not reading.
      if (silent >= this.#opts.deadAfterMs && !this.#paused) {
        this.#link?.terminate();
        return;
      }
      this.#deadTimer = setTimeout(check, Math.max(50, this.#opts.deadAfterMs - silent));
    };
    if (Number.isFinite(this.#opts.deadAfterMs)) this.#deadTimer = setTimeout(check, this.#opts.deadAfterMs);
  }

  #reconnect(wasSubscribed: boolean, retryAfterS?: number): void {
    if (this.#closed || this.#failure !== undefined) return;
    if (this.#reconnects >= this.#opts.maxReconnects) {
      this.#fail(new APIConnectionError(`stream: gave up after ${this.#reconnects} reconnections`));
      return;
    }
    const n = this.#reconnects++;
    // A link that was up (4008, 1001, a dead link) comes back at once; failures to connect back off.
    const base = wasSubscribed && n === 0 ? 0 : Math.min(500 * 2 ** n, MAX_RECONNECT_DELAY_MS);
    const delay = retryAfterS !== undefined ? retryAfterS * 1000 : base * (1 - 0.25 * Math.random());
    void sleep(delay).then(() => this.#connect());
  }
}
