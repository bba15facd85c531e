import { wireEvent, type ControlFrame } from '@svc/schema';
import type { StoredEvent } from '../store/events/events.js';

/**
 * A complete RFC 6455 text frame as a server sends it: FIN, opcode 1, no mask (RFC 6455 §5.1:
 * server frames are never masked), so the same bytes are valid on every connection and a
 * broadcast frames an event once instead of once per socket.
 */
export function textFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + n);
  frame[0] = 0x81;
  if (head === 2) frame[1] = n;
  else if (head === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(n), 2);
  }
  payload.copy(frame, head);
  return frame;
}

const serialised = new WeakMap<StoredEvent, string>();
const framed = new WeakMap<StoredEvent, Buffer>();
const messages = new WeakMap<StoredEvent, Buffer>();

/** The event's wire JSON, serialised once whatever the number of connections and transports it goes to. */
function eventJson(e: StoredEvent): string {
  let json = serialised.get(e);
  if (json === undefined) {
    json = JSON.stringify(wireEvent(e.event));
    serialised.set(e, json);
  }
  return json;
}

/** The event's WebSocket frame, built once whatever the number of sockets it goes to. */
export function eventFrame(e: StoredEvent): Buffer {
  let b = framed.get(e);
  if (!b) {
    b = textFrame(Buffer.from(eventJson(e)));
    framed.set(e, b);
  }
  return b;
}

/**
 * The event as one server-sent event (docs/stream.md "Server-sent events"): `id:` its id (what
 * `Last-Event-ID` sends back), `event:` its type, `data:` the same JSON as the WebSocket frame
 * (JSON.stringify never writes a line break). Built once per broadcast.
 */
export function sseEvent(e: StoredEvent): Buffer {
  let b = messages.get(e);
  if (!b) {
    b = Buffer.from(`id: ${e.event.id}\nevent: ${e.event.type}\ndata: ${eventJson(e)}\n\n`);
    messages.set(e, b);
  }
  return b;
}

/** A control frame as a server-sent event: no `id:`, so the client's Last-Event-ID stays the last event's. */
export function sseControl(frame: ControlFrame): Buffer {
  return Buffer.from(`event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`);
}

/** The event stream's keep-alive: a comment line, which EventSource ignores. */
export const SSE_HEARTBEAT = Buffer.from(': heartbeat\n\n');

/** The first bytes of every event stream: how long EventSource waits before it reconnects by itself. */
export const SSE_RETRY_MS = 1000;
