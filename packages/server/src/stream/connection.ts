import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/scopes.js';
import type { StoredEvent } from '../store/events.js';
import type { StreamFilter } from './filter.js';
import { eventFrame } from './frames.js';
import type { HubMember } from './hub.js';
import { CLOSE, controlFrame, HEARTBEAT_FRAME, type ControlFrame } from './protocol.js';

/** Subscribers flushed per event-loop turn: HTTP requests get a turn between slices of a big fan-out. */
const FLUSH_SLICE = 1000;
/** A flush that ended at least this recently means frames are flowing: coalesce rather than write at once. */
const BUSY_WITHIN_MS = 1;
/**
 * Each connection is pinged once per pingMs, but not all in the same turn: a round is split into
 * this many ticks and a connection belongs to one of them (round-robin by arrival). Pinging
 * 10,000 sockets at once is ~130 ms of writes and then 10,000 pongs to read, and events published
 * meanwhile waited for all of it (bench/stream, 10,000 subscribers: max latency ~700 ms).
 */
export const PING_SLOTS = 16;
/** Client messages waiting to be handled before the socket stops being read. */
const MAX_INBOX = 32;

/**
 * One client socket: its outbox, its liveness, its messages and the replay-then-live handoff.
 * Frames (events and control frames alike) queue in the outbox and leave through the Writer, so
 * a client sees every frame in the order they were produced.
 */
export class Connection implements HubMember {
  /** Complete frames waiting for the next flush, in order. */
  outbox: Buffer[] = [];
  /** Live events queued while the resume replay is read and sent; null once live. */
  private pending: StoredEvent[] | null;
  /** Seq of the last event queued to this socket: frames only ever go up (see deliver). */
  private lastSeq: number;
  private inbox: Promise<void> = Promise.resolve();
  private inboxLength = 0;
  lastSentAt: number;
  alive = true;
  mark = 0;

  constructor(
    readonly socket: WebSocket,
    /**
     * The TCP socket under `socket`. Queued frames are written to it directly: they are complete,
     * pre-built frames (frames.ts), and `ws` writes its own frames (ping, pong, close) straight to
     * the same socket without queueing (no permessage-deflate), so frames never interleave.
     */
    readonly raw: Duplex,
    readonly principal: Principal,
    readonly filter: StreamFilter,
    /** Which tick of the ping round pings this connection (see PING_SLOTS). */
    readonly pingSlot: number,
    private readonly writer: Writer,
    since: number | null,
    now: number,
  ) {
    this.pending = since === null ? null : [];
    this.lastSeq = since ?? 0;
    this.lastSentAt = now;
  }

  /** A live event from the broadcast: queued behind the replay while one is being sent. */
  offer(e: StoredEvent): void {
    if (this.pending) this.pending.push(e);
    else this.deliver(e);
  }

  /**
   * Events reach a socket in increasing seq: the bus is put in order by the Sequencer, and an
   * event the replay already covered (its broadcast can arrive after the handoff) is skipped. So
   * the last id a client saw is a safe `since`.
   */
  private deliver(e: StoredEvent): void {
    if (e.seq <= this.lastSeq) return;
    this.lastSeq = e.seq;
    this.writer.queue(this, eventFrame(e));
  }

  control(frame: ControlFrame): void {
    this.writer.queue(this, controlFrame(frame));
  }

  /**
   * Sends the `subscribed` frame, then the replay, then the live events that queued meanwhile.
   * Appends commit in sequence order, so a queued event at or below the replay's last seq was
   * part of the replay: deliver skips it, so nothing is lost or doubled.
   */
  goLive(subscribed: ControlFrame, replay: readonly StoredEvent[]): void {
    this.control(subscribed);
    for (const e of replay) this.deliver(e);
    const queued = this.pending ?? [];
    this.pending = null;
    for (const e of queued) this.deliver(e);
  }

  /** Heartbeat due: live, nothing queued, silent for heartbeatMs. */
  silentSince(now: number, heartbeatMs: number): boolean {
    return this.pending === null && this.outbox.length === 0 && now - this.lastSentAt >= heartbeatMs;
  }

  /**
   * A subscribe waits for league lookups, an unsubscribe does not: handled as they came, a
   * subscribe then unsubscribe sent together were answered (and applied) the other way round.
   * Messages run one at a time, in order; past MAX_INBOX waiting, the socket stops being read
   * until they are done, so a flood costs the client, not the node's memory.
   */
  receive(text: string, handle: (text: string) => Promise<void>): void {
    this.inboxLength++;
    if (this.inboxLength === MAX_INBOX) this.socket.pause();
    this.inbox = this.inbox
      .then(() => handle(text))
      .catch(() => undefined)
      .finally(() => {
        this.inboxLength--;
        if (this.inboxLength === MAX_INBOX - 1) this.socket.resume();
      });
  }
}

/**
 * Writes outboxes to the sockets. A flush writes each outbox with the TCP socket corked. When
 * frames are flowing the flush waits for the next event-loop turn, so a burst of N events to a
 * connection costs one write syscall instead of N, which is what lets one core keep up with
 * thousands of subscribers (bench/stream); when idle it runs at once, for latency.
 */
export class Writer {
  /** Connections with a non-empty outbox, in the order they got their first queued frame. */
  private dirty: Connection[] = [];
  private flushScheduled = false;
  /** When the last flush (all its slices) ended and how long it took: see queue. */
  private lastFlushEnd = -Infinity;
  private lastFlushMs = 0;
  private flushStart: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly maxBufferedBytes: number,
    /** The connection is gone (broken socket, slow consumer): forget it. */
    private readonly drop: (c: Connection) => void,
  ) {}

  queue(c: Connection, bytes: Buffer): void {
    if (c.outbox.length === 0) this.dirty.push(c);
    c.outbox.push(bytes);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Idle: flush as soon as the code that queued this returns, so a lone event is on the wire
    // before its HTTP request finishes. Busy (the last flush ended less than its own duration
    // ago, so writing costs more than the gaps between events): wait for the next turn, so the
    // frames of every request handled meanwhile leave in one write per socket.
    const sinceLast = performance.now() - this.lastFlushEnd;
    if (sinceLast < Math.max(BUSY_WITHIN_MS, this.lastFlushMs)) setImmediate(() => this.flush());
    else queueMicrotask(() => this.flush());
  }

  /** Writes one connection's queued frames now, ahead of a close frame that ws writes directly. */
  flushNow(c: Connection): void {
    const i = this.dirty.indexOf(c);
    if (i >= 0) this.dirty.splice(i, 1);
    this.writeOrDrop(c, this.clock.now());
  }

  /** Writes everything queued (shutdown: what was queued still goes out, ahead of the close frame). */
  flushAll(): void {
    const now = this.clock.now();
    for (const c of this.dirty.splice(0)) this.writeOrDrop(c, now);
  }

  private flush(): void {
    this.flushStart ??= performance.now();
    const slice = this.dirty.splice(0, FLUSH_SLICE);
    const now = this.clock.now();
    for (const c of slice) this.writeOrDrop(c, now);
    if (this.dirty.length > 0) setImmediate(() => this.flush());
    else {
      this.flushScheduled = false;
      this.lastFlushEnd = performance.now();
      this.lastFlushMs = this.lastFlushEnd - (this.flushStart ?? this.lastFlushEnd);
      this.flushStart = null;
    }
  }

  /**
   * One broken socket must not cost the others their frames, nor the process: a flush runs
   * outside any caller that could catch. Its client reconnects and resumes with `since`.
   */
  private writeOrDrop(c: Connection, now: number): void {
    try {
      this.write(c, now);
    } catch {
      c.socket.terminate();
      this.drop(c);
    }
  }

  private write(c: Connection, now: number): void {
    const frames = c.outbox;
    c.outbox = [];
    if (c.socket.readyState !== c.socket.OPEN) return;
    if (c.socket.bufferedAmount > this.maxBufferedBytes) {
      // Resumable: the client reconnects with since=<last id it saw>.
      c.socket.close(CLOSE.slowConsumer.code, CLOSE.slowConsumer.reason);
      this.drop(c);
      return;
    }
    if (frames.length === 1) c.raw.write(frames[0]);
    else {
      c.raw.cork();
      for (const frame of frames) c.raw.write(frame);
      c.raw.uncork();
    }
    c.lastSentAt = now;
  }
}

/** Heartbeats after silence and WebSocket pings spread over PING_SLOTS ticks of a round. */
export class Liveness {
  private nextSlot = 0;
  private tick = 0;

  constructor(
    private readonly writer: Writer,
    private readonly heartbeatMs: number,
    private readonly drop: (c: Connection) => void,
  ) {}

  /** The ping tick a new connection joins (round-robin by arrival). */
  slot(): number {
    return this.nextSlot++ % PING_SLOTS;
  }

  heartbeat(connections: Iterable<Connection>, now: number): void {
    for (const c of connections) if (c.silentSince(now, this.heartbeatMs)) this.writer.queue(c, HEARTBEAT_FRAME);
  }

  /** One tick of the round: pings its connections; one that did not answer the last ping is dropped. */
  ping(connections: Iterable<Connection>): void {
    const slot = this.tick++ % PING_SLOTS;
    for (const c of connections) {
      if (c.pingSlot !== slot) continue;
      if (!c.alive) {
        c.socket.terminate();
        this.drop(c);
        continue;
      }
      c.alive = false;
      c.socket.ping();
    }
  }
}
