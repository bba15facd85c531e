import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { validateWebhookUrl, type UrlCheck } from '../domain/webhooks/target.js';
import { pinnedLookup, resolveCheckedTarget, type Lookup } from './target-resolver.js';

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Connections kept per endpoint; matches the dispatcher's per-endpoint concurrency. */
  connectionsPerEndpoint: number;
  lookup?: Lookup;
}

export interface Outgoing {
  endpointId: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

export const EXCERPT_BYTES = 1024;
/** Agents are per endpoint (keep-alive pools); beyond this many the least recently used closes. */
const MAX_AGENTS = 2048;
/** URL checks are kept per URL text (they depend on nothing else); beyond this many the map starts over. */
const MAX_CHECKED_URLS = 4096;

function transportError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no answer within ${timeoutMs} ms`;
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `timeout: no answer within ${timeoutMs} ms`;
    default:
      return code ? `${code}: ${message}` : message;
  }
}

/** What the receiver answered, before the sender words it. */
type Answer =
  | { kind: 'response'; statusCode: number; location: string | null; excerpt: string; bodyError: unknown; timedOut: boolean }
  | { kind: 'failed'; err: unknown; timedOut: boolean };

/**
 * One POST through undici's dispatch API: status, the Location of a redirect and at most
 * EXCERPT_BYTES of the answer, with a deadline over the whole exchange. Cheaper than request():
 * no AbortSignal and no body stream per attempt (profile of bench/webhooks, bench/RESULTS.md).
 * Reaching the excerpt size or the deadline aborts the request, which closes its connection: a
 * receiver answering megabytes costs us 1 KiB, a slow one no more than the timeout.
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private location: string | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private timedOut = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    timeoutMs: number,
    private readonly resolve: (a: Answer) => void,
  ) {
    this.timer = setTimeout(() => this.expire(), timeoutMs);
  }

  private expire(): void {
    this.timedOut = true;
    // Before the request reached a socket there is nothing to abort yet: onRequestStart does it.
    this.controller?.abort(new Error('webhook attempt timed out'));
  }

  /** True once the deadline passed before the request was dispatched. */
  get expired(): boolean {
    return this.timedOut && this.controller === null;
  }

  /** Nothing will be sent (the target was refused): stops the deadline. */
  cancel(): void {
    this.settled = true;
    clearTimeout(this.timer);
  }

  private finish(a: Answer): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(a);
  }

  private response(bodyError: unknown): Answer {
    // The receiver's text is stored as it came, but for U+0000, which PostgreSQL's text type
    // cannot hold (decoding already turned invalid UTF-8 into U+FFFD).
    const excerpt = Buffer.concat(this.chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '\ufffd');
    return { kind: 'response', statusCode: this.statusCode, location: this.location, excerpt, bodyError, timedOut: this.timedOut };
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(new Error('webhook attempt timed out'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    const location = headers.location;
    this.location = location === undefined ? null : String(location);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size < EXCERPT_BYTES) return;
    this.finish(this.response(null));
    controller.abort(new Error('webhook answer longer than the excerpt'));
  }

  onResponseEnd(): void {
    this.finish(this.response(null));
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    // The status line already arrived: the answer counts, the excerpt is what we got.
    if (this.statusCode !== 0) this.finish(this.response(err));
    else this.finish({ kind: 'failed', err, timedOut: this.timedOut });
  }
}

/**
 * POSTs one signed delivery. The target is resolved and checked at every attempt and the
 * connection is pinned to the checked address (DNS rebinding cannot move it); the URL's own
 * host still names the request (Host header, TLS SNI and certificate). Redirects are never
 * followed. Timing uses the monotonic clock: durations and socket timeouts are wall time,
 * while every scheduling decision reads the injected Clock.
 */
export class WebhookSender {
  private readonly agents = new Map<string, { pin: string; agent: Agent }>();
  private readonly checkedUrls = new Map<string, UrlCheck>();

  constructor(private readonly opts: SenderOptions) {}

  private agentFor(endpointId: string, address: string, family: number): Agent {
    const pin = `${family}/${address}`;
    const hit = this.agents.get(endpointId);
    if (hit && hit.pin === pin) {
      this.agents.delete(endpointId);
      this.agents.set(endpointId, hit);
      return hit.agent;
    }
    if (hit) void hit.agent.close();
    const agent = new Agent({
      connections: this.opts.connectionsPerEndpoint,
      keepAliveTimeout: 4_000,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      connect: { lookup: pinnedLookup(address, family), timeout: this.opts.timeoutMs },
    });
    this.agents.set(endpointId, { pin, agent });
    if (this.agents.size > MAX_AGENTS) {
      const [oldest] = this.agents.keys();
      void this.agents.get(oldest)?.agent.close();
      this.agents.delete(oldest);
    }
    return agent;
  }

  /** The URL check of registration, again at every attempt (config may have changed), kept per URL text. */
  private checkUrl(raw: string): UrlCheck {
    const hit = this.checkedUrls.get(raw);
    if (hit) return hit;
    const check = validateWebhookUrl(raw, { allowPrivate: this.opts.allowPrivate });
    if (this.checkedUrls.size >= MAX_CHECKED_URLS) this.checkedUrls.clear();
    this.checkedUrls.set(raw, check);
    return check;
  }

  async send(o: Outgoing): Promise<SendResult> {
    const started = performance.now();
    const { timeoutMs } = this.opts;
    const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
    const valid = this.checkUrl(o.url);
    if (!valid.ok) return done({ statusCode: null, error: `target refused: ${valid.reason}`, excerpt: null });
    const url = valid.url;
    let answered!: (a: Answer) => void;
    const answer = new Promise<Answer>((resolve) => (answered = resolve));
    // The deadline starts before the lookup: a slow resolver counts against the timeout too.
    const handler = new ExchangeHandler(timeoutMs, answered);
    const target = await resolveCheckedTarget(url, { allowPrivate: this.opts.allowPrivate, lookup: this.opts.lookup });
    if (!target.ok || handler.expired) {
      handler.cancel();
      if (!target.ok) return done({ statusCode: null, error: `target refused: ${target.reason}`, excerpt: null });
      return done({ statusCode: null, error: transportError(null, true, timeoutMs), excerpt: null });
    }
    this.agentFor(o.endpointId, target.address, target.family).dispatch(
      { origin: url.origin, path: url.pathname + url.search, method: 'POST', headers: o.headers, body: o.body },
      handler,
    );
    const a = await answer;
    if (a.kind === 'failed') return done({ statusCode: null, error: transportError(a.err, a.timedOut, timeoutMs), excerpt: null });
    const { statusCode } = a;
    let error: string | null = a.bodyError === null ? null : `response body: ${transportError(a.bodyError, a.timedOut, timeoutMs)}`;
    if (statusCode >= 300 && statusCode < 400) {
      error = `redirect ${statusCode}${a.location ? ` to ${a.location.slice(0, 200)}` : ''} not followed`;
    } else if (statusCode < 200 || statusCode > 299) {
      error ??= `HTTP ${statusCode}`;
    }
    return done({ statusCode, error, excerpt: a.excerpt === '' ? null : a.excerpt });
  }

  /** Waits for requests in flight, or with `abort` ends them now (their claims were released). */
  async close(abort = false): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => (abort ? a.agent.destroy() : a.agent.close())));
  }
}
