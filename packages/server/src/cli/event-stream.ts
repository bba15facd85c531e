import WebSocket from 'ws';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ScoreEvent, StatusEvent, STREAM_PATH } from '@svc/schema';

/**
 * An event as the stream sends it (docs/stream.md): a scoring event's spec fields, or a status
 * change (docs/schedule.md); later additions pass.
 */
export const StreamEvent = Type.Union([
  Type.Object(Type.Pick(ScoreEvent, ['id', 'type', 'tier', 'game_id', 'team', 'points', 'ts', 'confidence', 'provisional_id', 'retracted_id', 'schema']).properties),
  Type.Object(StatusEvent.properties),
]);
export type StreamEvent = Static<typeof StreamEvent>;

/**
 * The stream as `svc tail` consumes it: events only, resumed with `since` after a drop. This is
 * the one seam between the CLI and the wire; the TypeScript client's `svc.stream()` offers the
 * same shape and can take its place.
 */
export interface EventStreamOptions {
  /** The service's origin, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  apiKey: string;
  query: Record<string, string>;
  /** Control frames (subscribed, error) and reconnects, for a status line. */
  onNotice?: (notice: StreamNotice) => void;
}

export type StreamNotice =
  | { kind: 'subscribed'; frame: Record<string, unknown> }
  | { kind: 'error'; frame: Record<string, unknown> }
  | { kind: 'reconnecting'; code: number; inMs: number };

/** The service refused the stream (HTTP status and the documented error body's message), or ended it for good. */
export class StreamRefusedError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface EventStream extends AsyncIterable<StreamEvent> {
  close(): void;
}

/** Close codes after which reconnecting cannot help: auth (via HTTP), plan limit, policy. */
const FINAL_CLOSE = new Set([1008, 4029]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Opens the stream; iterate for events. Reconnects (1001 drain, 1006 drop, 4008 slow) with since=<last id>. */
export function openEventStream(opts: EventStreamOptions): EventStream {
  const queue: StreamEvent[] = [];
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let closed = false;
  let ws: WebSocket | null = null;
  let lastId: string | null = opts.query.since ?? null;
  let backoffMs = 250;
  let everOpened = false;
  const notify = () => {
    wake?.();
    wake = null;
  };

  const connect = () => {
    const url = new URL(STREAM_PATH, opts.baseUrl.replace(/^http/, 'ws'));
    for (const [k, v] of Object.entries(opts.query)) url.searchParams.set(k, v);
    if (lastId) url.searchParams.set('since', lastId);
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${opts.apiKey}` }, handshakeTimeout: 10_000 });
    ws = socket;
    socket.on('open', () => {
      everOpened = true;
      backoffMs = 250;
    });
    socket.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (!isRecord(frame)) return;
      if (Value.Check(StreamEvent, frame)) {
        lastId = frame.id;
        queue.push(frame);
        notify();
      } else if (frame.type === 'subscribed') opts.onNotice?.({ kind: 'subscribed', frame });
      else if (frame.type === 'error') opts.onNotice?.({ kind: 'error', frame });
    });
    let refused = false;
    socket.on('unexpected-response', (_req, res) => {
      // The answer's body says why; the close that follows must not read as "unreachable".
      refused = true;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        let message = `HTTP ${res.statusCode}`;
        try {
          const parsed: unknown = JSON.parse(body);
          if (isRecord(parsed) && isRecord(parsed.error) && typeof parsed.error.message === 'string') message = `${message}: ${parsed.error.message}`;
        } catch {
          // not the documented body: the status says enough
        }
        failure = new StreamRefusedError(message, res.statusCode ?? null);
        notify();
        socket.terminate();
      });
    });
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => {
      if (closed || failure || refused) return;
      if (!everOpened) {
        failure = new StreamRefusedError(`no svc service at ${opts.baseUrl} (start one with \`npm start\` or pass --url)`, null);
        notify();
        return;
      }
      if (FINAL_CLOSE.has(code)) {
        failure = new StreamRefusedError(`stream closed ${code}: ${reason.toString() || 'refused'}`, null);
        notify();
        return;
      }
      const inMs = backoffMs;
      backoffMs = Math.min(backoffMs * 2, 10_000);
      opts.onNotice?.({ kind: 'reconnecting', code, inMs });
      setTimeout(() => {
        if (!closed) connect();
      }, inMs);
    });
  };
  connect();

  return {
    close() {
      closed = true;
      ws?.close(1000);
      notify();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (failure) throw failure;
        if (closed) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
