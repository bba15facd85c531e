import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { StoredEvent } from '../store/events/events.js';
import { eventFrame, sseControl, sseEvent, SSE_HEARTBEAT } from './frames.js';
import { CLOSE, controlFrame, HEARTBEAT_FRAME, type ControlFrame } from './protocol.js';

export type CloseKind = keyof typeof CLOSE;

/**
 * How a connection's frames reach its client: the one thing the WebSocket and the event stream
 * (docs/stream.md "Server-sent events") do differently. The hub, the sequencer, the filters, the
 * outbox, the replay-then-live handoff and the delay are the connection's and the gateway's, and
 * the same for both. Each transport turns an event into its bytes once per broadcast (frames.ts),
 * whatever the number of its connections.
 */
export interface Transport {
  readonly kind: 'websocket' | 'event-stream';
  /** The event's bytes on this transport, built once per broadcast. */
  event(e: StoredEvent): Buffer;
  control(frame: ControlFrame): Buffer;
  /** What is sent after `heartbeatMs` of silence. */
  readonly heartbeat: Buffer;
  readonly heartbeatMs: number;
  readonly open: boolean;
  /** Bytes written and not yet taken by the kernel (the slow-consumer rule reads it). */
  readonly buffered: number;
  write(frames: readonly Buffer[]): void;
  /** Ends the connection for a documented reason (a WebSocket close code; an event stream's `close` frame). */
  close(kind: CloseKind): void;
  /** Cuts the connection off without a goodbye (a broken socket). */
  terminate(): void;
  /** Resolves once the underlying socket is gone. */
  readonly closed: Promise<void>;
  /** Liveness probing: a WebSocket ping the client must answer; an event stream has none (its heartbeat writes fail instead). */
  ping(): boolean;
  /** Flow control of client messages (a WebSocket's only). */
  pauseReading(): void;
  resumeReading(): void;
}

const socketGone = (s: Duplex): Promise<void> =>
  new Promise((resolve) => {
    if (s.destroyed) resolve();
    else s.once('close', () => resolve());
  });

/**
 * A WebSocket. Queued frames are written to the TCP socket under it directly: they are complete,
 * pre-built frames (frames.ts), and `ws` writes its own frames (ping, pong, close) straight to
 * the same socket without queueing (no permessage-deflate), so frames never interleave.
 */
export class WebSocketTransport implements Transport {
  readonly kind = 'websocket';
  readonly heartbeat = HEARTBEAT_FRAME;
  readonly closed: Promise<void>;
  /** Whether the client answered the last ping. */
  alive = true;

  constructor(
    readonly socket: WebSocket,
    private readonly raw: Duplex,
    readonly heartbeatMs: number,
  ) {
    this.closed = new Promise((resolve) => {
      if (socket.readyState === socket.CLOSED) resolve();
      else socket.once('close', () => resolve());
    });
    socket.on('pong', () => {
      this.alive = true;
    });
  }

  event(e: StoredEvent): Buffer {
    return eventFrame(e);
  }

  control(frame: ControlFrame): Buffer {
    return controlFrame(frame);
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  get buffered(): number {
    return this.socket.bufferedAmount;
  }

  write(frames: readonly Buffer[]): void {
    if (frames.length === 1) this.raw.write(frames[0]);
    else {
      this.raw.cork();
      for (const frame of frames) this.raw.write(frame);
      this.raw.uncork();
    }
  }

  close(kind: CloseKind): void {
    this.socket.close(CLOSE[kind].code, CLOSE[kind].reason);
  }

  terminate(): void {
    this.socket.terminate();
  }

  ping(): boolean {
    if (!this.alive) return false;
    this.alive = false;
    this.socket.ping();
    return true;
  }

  pauseReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }
}

/**
 * A server-sent event stream: the response to `GET /v1/stream` with `Accept: text/event-stream`.
 * Its head is written by the gateway; from then on the body is SSE messages written to the TCP
 * socket as they are (the response is delimited by the connection's end, so no chunk framing is
 * added per write, and a broadcast costs one socket write per subscriber, as on a WebSocket).
 * Ending it for a reason sends a `close` frame naming the WebSocket's close code and reason first.
 */
export class EventStreamTransport implements Transport {
  readonly kind = 'event-stream';
  readonly heartbeat = SSE_HEARTBEAT;
  readonly closed: Promise<void>;

  constructor(
    readonly socket: Socket,
    readonly heartbeatMs: number,
  ) {
    this.closed = socketGone(socket);
  }

  event(e: StoredEvent): Buffer {
    return sseEvent(e);
  }

  control(frame: ControlFrame): Buffer {
    return sseControl(frame);
  }

  get open(): boolean {
    return !this.socket.destroyed && this.socket.writable;
  }

  get buffered(): number {
    return this.socket.writableLength;
  }

  write(frames: readonly Buffer[]): void {
    if (frames.length === 1) this.socket.write(frames[0]);
    else {
      this.socket.cork();
      for (const frame of frames) this.socket.write(frame);
      this.socket.uncork();
    }
  }

  close(kind: CloseKind): void {
    if (!this.open) return;
    // A slow consumer's buffer is full already: another frame would only wait behind it.
    if (kind === 'slowConsumer') {
      this.socket.destroy();
      return;
    }
    this.socket.end(sseControl({ type: 'close', code: CLOSE[kind].code, reason: CLOSE[kind].reason }));
    // A peer that never reads would hold the socket half-closed: it is cut off after a grace.
    const t = setTimeout(() => this.socket.destroy(), 2_000);
    t.unref();
    this.socket.once('close', () => clearTimeout(t));
  }

  terminate(): void {
    this.socket.destroy();
  }

  ping(): boolean {
    return true;
  }

  pauseReading(): void {}

  resumeReading(): void {}
}
