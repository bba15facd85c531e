import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { pinnedLookup, resolveSafeTarget, type Lookup } from './target-resolver.js';

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

async function readExcerpt(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Breaking out destroys the stream: a receiver answering megabytes costs us 1 KiB.
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buf);
    size += buf.length;
    if (size >= EXCERPT_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
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

  async send(o: Outgoing): Promise<SendResult> {
    const started = performance.now();
    const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), this.opts.timeoutMs);
    try {
      let url: URL;
      try {
        url = new URL(o.url);
      } catch {
        return done({ statusCode: null, error: 'target refused: url is not valid', excerpt: null });
      }
      const target = await resolveSafeTarget(url, { allowPrivate: this.opts.allowPrivate, lookup: this.opts.lookup });
      if (!target.ok) return done({ statusCode: null, error: `target refused: ${target.reason}`, excerpt: null });
      if (ac.signal.aborted) return done({ statusCode: null, error: transportError(null, true, this.opts.timeoutMs), excerpt: null });
      let res;
      try {
        res = await request(url, {
          method: 'POST',
          headers: o.headers,
          body: o.body,
          dispatcher: this.agentFor(o.endpointId, target.address, target.family),
          signal: ac.signal,
        });
      } catch (err) {
        return done({ statusCode: null, error: transportError(err, ac.signal.aborted, this.opts.timeoutMs), excerpt: null });
      }
      const statusCode = res.statusCode;
      let excerpt: string | null = null;
      let error: string | null = null;
      try {
        excerpt = await readExcerpt(res.body);
      } catch (err) {
        // The status line already arrived: the answer counts, the excerpt is what we got.
        error = `response body: ${transportError(err, ac.signal.aborted, this.opts.timeoutMs)}`;
      }
      if (statusCode >= 300 && statusCode < 400) {
        const location = res.headers.location;
        error = `redirect ${statusCode}${location ? ` to ${String(location).slice(0, 200)}` : ''} not followed`;
      } else if (statusCode < 200 || statusCode > 299) {
        error ??= `HTTP ${statusCode}`;
      }
      return done({ statusCode, error, excerpt: excerpt === '' ? null : excerpt });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for requests in flight, or with `abort` ends them now (their claims were released). */
  async close(abort = false): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => (abort ? a.agent.destroy() : a.agent.close())));
  }
}
