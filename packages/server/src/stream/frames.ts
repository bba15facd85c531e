import { wireEvent } from '@svc/schema';
import type { StoredEvent } from '../store/events.js';

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

const framed = new WeakMap<StoredEvent, Buffer>();

/** The event's stream frame, serialised and framed once whatever the number of sockets it goes to. */
export function eventFrame(e: StoredEvent): Buffer {
  let b = framed.get(e);
  if (!b) {
    b = textFrame(Buffer.from(JSON.stringify(wireEvent(e.event))));
    framed.set(e, b);
  }
  return b;
}
