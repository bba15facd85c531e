import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/scopes.js';
import type { StoredEvent } from '../store/events/events.js';
import type { StreamFilter } from './filter.js';
import type { HubMember } from './hub.js';
import type { ControlFrame } from './protocol.js';
import type { Transport } from './transport.js';

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
/** A resume's frames are written in slices of about this many bytes, each once the socket took the last (Connection.goLive). */
export const REPLAY_SLICE_BYTES = 64 * 1024;
/** How often a replay waiting for its socket to take a slice looks again. */
const DRAIN_POLL_MS = 10;
const NO_REPLAY: AsyncIterable<readonly StoredEvent[]> = (async function* () {})();

/**
 * One client connection, whichever its transport (transport.ts): its outbox, its liveness, its
 * messages, the replay-then-live handoff and the broadcast delay. Frames (events and control
 * frames alike) queue in the outbox and leave through the Writer, so a client sees every frame in
 * the order they were produced.
 */
export class Connection implements HubMember {
  /** Complete frames waiting for the next flush, in order. */
  outbox: Buffer[] = [];
  /** Live events queued while the resume replay is read and sent; null once live. */
  private pending: StoredEvent[] | null;
  /** Seq of the last event queued to this connection: frames only ever go up (see deliver). */
  private lastSeq: number;
  private inbox: Promise<void> = Promise.resolve();
  private inboxLength = 0;
  /** With a delay: events in order, waiting for their `ts` + delay (docs/stream.md "Broadcast delay"). */
  private held: StoredEvent[] = [];
  private heldHead = 0;
  private delayTimer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  lastSentAt: number;
  mark = 0;
  /** Set by dispose: the connection is gone. */
  private gone = false;

  constructor(
    readonly transport: Transport,
    readonly principal: Principal,
    readonly filter: StreamFilter,
    /** Which tick of the ping round pings this connection (see PING_SLOTS). */
    readonly pingSlot: number,
    private readonly writer: Writer,
    since: number | null,
    private readonly clock: Clock,
    /** `delay=` in ms: every event is held until its `ts` plus this; heartbeats are not. */
    private readonly delayMs = 0,
  ) {
    this.pending = since === null ? null : [];
    this.lastSeq = since ?? 0;
    this.lastSentAt = clock.now();
  }

  /**
   * A live event from the broadcast: queued behind the replay while one is being sent. What
   * queues is bounded like what a delay holds (STREAM_LIMITS.replayMaxEvents): past it the
   * connection is a slow consumer and resumes with `since`.
   */
  offer(e: StoredEvent): void {
    if (!this.pending) {
      this.deliver(e);
      return;
    }
    this.pending.push(e);
    if (this.pending.length > this.writer.maxHeldEvents) this.writer.slowConsumer(this);
  }

  /**
   * Events reach a connection in increasing seq: the bus is put in order by the Sequencer, and an
   * event the replay already covered (its broadcast can arrive after the handoff) is skipped. So
   * the last id a client saw is always a safe `since`, delayed or not.
   */
  private deliver(e: StoredEvent): void {
    if (e.seq <= this.lastSeq) return;
    this.lastSeq = e.seq;
    if (this.delayMs > 0) this.hold(e);
    else this.writer.queue(this, this.transport.event(e));
  }

  /**
   * Delayed delivery keeps the order: an event leaves once its own `ts` + delay has passed and
   * every event before it has left, so nothing reaches the client earlier than `delay` after its
   * `ts`. What waits is bounded like a replay (STREAM_LIMITS.replayMaxEvents); past it the
   * connection is a slow consumer and resumes with `since`.
   */
  private hold(e: StoredEvent): void {
    this.held.push(e);
    if (this.held.length - this.heldHead > this.writer.maxHeldEvents) {
      this.writer.slowConsumer(this);
      return;
    }
    if (this.held.length - this.heldHead === 1) this.releaseDue();
  }

  private releaseDue(): void {
    if (this.delayTimer) clearTimeout(this.delayTimer);
    this.delayTimer = null;
    const now = this.clock.now();
    while (this.heldHead < this.held.length) {
      const e = this.held[this.heldHead];
      const due = Date.parse(e.event.ts) + this.delayMs;
      if (due > now) {
        this.delayTimer = setTimeout(() => this.releaseDue(), due - now);
        this.delayTimer.unref();
        break;
      }
      this.heldHead++;
      this.writer.queue(this, this.transport.event(e));
    }
    if (this.heldHead === this.held.length) {
      this.held = [];
      this.heldHead = 0;
    } else if (this.heldHead > 1024 && this.heldHead * 2 > this.held.length) {
      this.held = this.held.slice(this.heldHead);
      this.heldHead = 0;
    }
  }

  /** When the stream token that opened it expires; null for a key. */
  expiresAt: number | null = null;

  /**
   * A token's connection ends when the token expires (docs/stream.md "Stream tokens"): a timer
   * for the moment itself, and the gateway's periodic key check for a clock that moved otherwise.
   */
  expireAt(at: number, expire: () => void): void {
    this.expiresAt = at;
    this.expiryTimer = setTimeout(expire, Math.max(0, at - this.clock.now()));
    this.expiryTimer.unref();
  }

  /** The connection is gone: its timers go with it, and a replay being sent stops. */
  dispose(): void {
    this.gone = true;
    if (this.delayTimer) clearTimeout(this.delayTimer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.delayTimer = this.expiryTimer = null;
    this.held = [];
    this.heldHead = 0;
  }

  control(frame: ControlFrame): void {
    this.writer.queue(this, this.transport.control(frame));
  }

  /**
   * Sends the `subscribed` frame, then the replay, then the live events that queued meanwhile.
   * Appends commit in sequence order, so a queued event at or below the replay's last seq was
   * part of the replay: deliver skips it, so nothing is lost or doubled.
   *
   * The replay goes out in slices of about REPLAY_SLICE_BYTES, each written under the
   * slow-consumer rule live frames follow (Writer.write), and the next slice only once the
   * socket has taken the last one; a client that takes none of it for `replayStallMs` is a slow
   * consumer (docs/stream.md "Limits"). So a resume never puts more than a slice or two of
   * frames in the process's buffers, whatever its size. Resolves false when the connection went
   * meanwhile (cut, closed, or gone).
   */
  async goLive(subscribed: ControlFrame, replay: AsyncIterable<readonly StoredEvent[]> = NO_REPLAY): Promise<boolean> {
    this.control(subscribed);
    let slice = 0;
    for await (const page of replay) {
      for (const e of page) {
        if (this.gone) return false;
        const queued = this.outbox.length;
        this.deliver(e);
        for (let i = queued; i < this.outbox.length; i++) slice += this.outbox[i].length;
        if (slice >= REPLAY_SLICE_BYTES) {
          slice = 0;
          if (!(await this.writer.sendSlice(this))) return false;
        }
      }
    }
    if (this.gone) return false;
    const queued = this.pending ?? [];
    this.pending = null;
    for (const e of queued) this.deliver(e);
    return true;
  }

  /** Heartbeat due: live, nothing queued, silent for the transport's heartbeat interval. */
  silentSince(now: number): boolean {
    return this.pending === null && this.outbox.length === 0 && now - this.lastSentAt >= this.transport.heartbeatMs;
  }

  /**
   * A subscribe waits for league lookups, an unsubscribe does not: handled as they came, a
   * subscribe then unsubscribe sent together were answered (and applied) the other way round.
   * Messages run one at a time, in order; past MAX_INBOX waiting, the socket stops being read
   * until they are done, so a flood costs the client, not the node's memory.
   */
  receive(text: string, handle: (text: string) => Promise<void>): void {
    this.inboxLength++;
    if (this.inboxLength === MAX_INBOX) this.transport.pauseReading();
    this.inbox = this.inbox
      .then(() => handle(text))
      .catch(() => undefined)
      .finally(() => {
        this.inboxLength--;
        if (this.inboxLength === MAX_INBOX - 1) this.transport.resumeReading();
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
    /** Events a delayed connection may hold back (or queue behind its replay) before it counts as a slow consumer. */
    readonly maxHeldEvents = 10_000,
    /** How long a resume waits for its client to take a slice before it counts as a slow consumer. */
    private readonly stallMs = 10_000,
    /** Whether the connection is still one of the node's (the gateway's hub). */
    private readonly alive: (c: Connection) => boolean = () => true,
  ) {}

  /** Resumable: the client reconnects with since=<last id it saw> (Last-Event-ID on an event stream). */
  slowConsumer(c: Connection): void {
    c.transport.close('slowConsumer');
    this.drop(c);
  }

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

  /**
   * A slice of a resume: writes the connection's queued frames now (under the slow-consumer rule),
   * then waits until the socket has taken all but less than a slice of what is unsent. A client
   * that takes nothing for `stallMs` is a slow consumer. Resolves whether the connection is
   * still there to take the next slice.
   */
  async sendSlice(c: Connection): Promise<boolean> {
    this.flushNow(c);
    const deadline = performance.now() + this.stallMs;
    for (;;) {
      if (!c.transport.open || !this.alive(c)) return false;
      const unsent = c.transport.buffered;
      if (unsent < REPLAY_SLICE_BYTES) return true;
      if (performance.now() >= deadline) {
        this.slowConsumer(c);
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
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
      c.transport.terminate();
      this.drop(c);
    }
  }

  private write(c: Connection, now: number): void {
    const frames = c.outbox;
    c.outbox = [];
    if (!c.transport.open) return;
    if (c.transport.buffered > this.maxBufferedBytes) {
      this.slowConsumer(c);
      return;
    }
    c.transport.write(frames);
    c.lastSentAt = now;
  }
}

/** Heartbeats after silence (each transport's own) and WebSocket pings spread over PING_SLOTS ticks of a round. */
export class Liveness {
  private nextSlot = 0;
  private tick = 0;

  constructor(
    private readonly writer: Writer,
    private readonly drop: (c: Connection) => void,
  ) {}

  /** The ping tick a new connection joins (round-robin by arrival). */
  slot(): number {
    return this.nextSlot++ % PING_SLOTS;
  }

  heartbeat(connections: Iterable<Connection>, now: number): void {
    for (const c of connections) if (c.silentSince(now)) this.writer.queue(c, c.transport.heartbeat);
  }

  /** One tick of the round: pings its connections; one that did not answer the last ping is dropped. */
  ping(connections: Iterable<Connection>): void {
    const slot = this.tick++ % PING_SLOTS;
    for (const c of connections) {
      if (c.pingSlot !== slot) continue;
      if (!c.transport.ping()) {
        c.transport.terminate();
        this.drop(c);
      }
    }
  }
}
