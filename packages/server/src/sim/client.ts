import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';

export interface Reply {
  status: number;
  body: unknown;
}

export class SimStoppedError extends Error {}

/**
 * The simulator's HTTP side: it feeds the service only through its public ingestion API, like
 * any reporter app or official feed would. One keep-alive pool, closed (with any request still
 * in flight aborted) when the simulator stops.
 */
export class IngestClient {
  private readonly agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });
  private readonly abort = new AbortController();

  constructor(private readonly baseUrl: string) {
    // Every request in flight listens on this one signal; dozens at once are normal here.
    setMaxListeners(0, this.abort.signal);
  }

  async post(key: string, path: string, body: unknown): Promise<Reply> {
    if (this.abort.signal.aborted) throw new SimStoppedError('simulator stopped');
    const res = await request(new URL(path, this.baseUrl), {
      method: 'POST',
      dispatcher: this.agent,
      signal: this.abort.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.statusCode, body: parsed };
  }

  async get(path: string): Promise<Reply> {
    const res = await request(new URL(path, this.baseUrl), { method: 'GET', dispatcher: this.agent, signal: this.abort.signal, headersTimeout: 5_000 });
    const text = await res.body.text();
    return { status: res.statusCode, body: text };
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.agent.destroy();
  }
}

/** The `error.code` of the service's error body, if it has one. */
export function errorCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const err = body.error;
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** `data[i].event_id` of a 202 from POST /v1/reports. */
export function reportResults(body: unknown): { event_id: string | null; tier: string }[] {
  if (typeof body !== 'object' || body === null || !('data' in body) || !Array.isArray(body.data)) return [];
  return body.data.map((d: unknown) => {
    if (typeof d !== 'object' || d === null) return { event_id: null, tier: 'provisional' };
    const eventId = 'event_id' in d && typeof d.event_id === 'string' ? d.event_id : null;
    const tier = 'tier' in d && typeof d.tier === 'string' ? d.tier : 'provisional';
    return { event_id: eventId, tier };
  });
}
