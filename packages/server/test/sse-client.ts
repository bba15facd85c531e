import { EventSource } from 'eventsource';

/** One server-sent event as the `eventsource` package hands it over. */
export interface SseMessage {
  event: string;
  id: string;
  data: Record<string, unknown>;
  /** Date.now() when it arrived. */
  at: number;
}

/** The event names svc sends: event types and control frames (docs/stream.md "Server-sent events"). */
const NAMES = ['subscribed', 'score', 'score_retracted', 'status', 'error', 'close'];

/**
 * An event-stream client built on the `eventsource` npm package (the WHATWG EventSource for
 * Node): it reconnects by itself and sends Last-Event-ID as a browser does. A key goes in the
 * Authorization header (through its fetch option); a stream token goes in the URL.
 */
export class SseClient {
  readonly messages: SseMessage[] = [];
  /** Connection errors (`error` events without data), e.g. a dropped connection or a refusal. */
  errors = 0;
  /** Times the connection opened (1 + reconnections). */
  opens = 0;
  readonly es: EventSource;

  constructor(url: string, key?: string) {
    this.es = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) } }),
    });
    this.es.addEventListener('open', () => this.opens++);
    for (const name of NAMES) {
      this.es.addEventListener(name, (e) => {
        if (!('data' in e) || typeof e.data !== 'string') {
          this.errors++;
          return;
        }
        this.messages.push({ event: e.type, id: e.lastEventId, data: JSON.parse(e.data), at: Date.now() });
      });
    }
  }

  events(): SseMessage[] {
    return this.messages.filter((m) => m.event === 'score' || m.event === 'score_retracted');
  }

  of(event: string): SseMessage[] {
    return this.messages.filter((m) => m.event === event);
  }

  async until(pred: (c: SseClient) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; messages: ${JSON.stringify(this.messages.slice(-5))}, readyState ${this.es.readyState}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): void {
    this.es.close();
  }
}

/** Reads an event stream's raw bytes (fetch) until `pred` holds for the text so far, then aborts. */
export async function readRaw(url: string, headers: Record<string, string>, pred: (text: string) => boolean, timeoutMs = 10_000): Promise<{ status: number; headers: Headers; text: string }> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  const res = await fetch(url, { headers, signal: ctl.signal });
  let text = '';
  try {
    if (!res.body) return { status: res.status, headers: res.headers, text };
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    while (!pred(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // Aborted by the timeout: the caller checks what arrived.
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
  return { status: res.status, headers: res.headers, text };
}
