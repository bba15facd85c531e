import type { StoredEvent } from '../store/events/events.js';

/**
 * Puts the bus's events back into global sequence order before the stream delivers them.
 *
 * Appends commit in sequence order, but each node publishes its own after its commit, so the bus
 * can carry seq N+1 before N (node B published first). Delivered as they came, a client would see
 * N+1, and resuming from N+1 would lose N. The sequencer emits events strictly in seq order:
 * one that leaves a hole is held until the hole fills from the bus, or at most `holdMs`, after which
 * the hole is read from the store. The store is authoritative: once N+1 is committed, N is either
 * committed too or never will be (a rolled-back append), so what the read does not return never
 * comes. Events at or below the last emitted seq are repeats and dropped.
 *
 * A read of the hole that fails (a busy or unreachable store) is tried again a hold later, the
 * events behind the hole held meanwhile: skipping the hole would lose the event in it for every
 * client, for good, since they resume from what they received. Only once more than `maxHeld`
 * events wait behind a hole the store cannot read (other nodes go on appending while this one's
 * store is away) are they sent on without it, so memory stays bounded.
 */
export class Sequencer {
  /** Highest seq emitted; null until the starting point is known. */
  private last: number | null = null;
  private readonly held = new Map<number, StoredEvent>();
  private timer: NodeJS.Timeout | null = null;
  private filling = false;
  private closed = false;

  constructor(
    private readonly emit: (events: StoredEvent[]) => void,
    /** Stored events with after < seq < before, in order. */
    private readonly readGap: (after: number, before: number) => Promise<StoredEvent[]>,
    private readonly holdMs: number,
    /** Events held behind a hole the store cannot read before they are sent on without it. */
    private readonly maxHeld: number = 10_000,
  ) {}

  /**
   * Sets the starting point (the store's last seq when the node starts); events held meanwhile
   * follow. Those are live whatever the read answered: the bus carried them after the gateway
   * subscribed, and a client connected while the read was on its way (a busy database can take
   * seconds) has seen none of them, so the sequence starts just before the first of them when that
   * lies below the store's answer.
   */
  start(lastSeq: number): void {
    if (this.last !== null) return;
    let first = lastSeq + 1;
    for (const seq of this.held.keys()) if (seq < first) first = seq;
    this.last = first - 1;
    this.release([]);
  }

  push(events: StoredEvent[]): void {
    if (this.closed) return;
    if (this.last === null || this.held.size > 0 || this.filling) {
      for (const e of events) if (this.last === null || e.seq > this.last) this.held.set(e.seq, e);
      if (this.last !== null && !this.filling) this.release([]);
      return;
    }
    // The common case: in order and nothing held, emitted as the same batch.
    let inOrder = true;
    let expect = this.last;
    for (const e of events) {
      if (e.seq !== expect + 1) {
        inOrder = false;
        break;
      }
      expect = e.seq;
    }
    if (inOrder) {
      if (events.length === 0) return;
      this.last = expect;
      this.emit(events);
      return;
    }
    for (const e of events) if (e.seq > this.last) this.held.set(e.seq, e);
    this.release([]);
  }

  /**
   * The bus was away: events up to `head` (the store's last seq now) may never come through it.
   * They are read from the store and emitted in order; any that arrive later are repeats.
   */
  async catchUp(head: number): Promise<void> {
    if (this.closed || this.last === null || this.filling || head <= this.last) return;
    this.filling = true;
    const from = this.last;
    let found: StoredEvent[] = [];
    try {
      found = await this.readGap(from, head + 1);
    } catch {
      // The store is unreachable too: the next event the bus carries leaves a hole to fill.
    }
    this.filling = false;
    if (this.closed) return;
    for (const e of found) if (this.last !== null && e.seq > this.last) this.held.set(e.seq, e);
    this.release([]);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.held.clear();
  }

  /** Emits `ready` and then every held event that continues the sequence; arms the timer for a hole. */
  private release(ready: StoredEvent[]): void {
    if (this.last === null) return;
    const out = ready;
    let last = this.last;
    while (this.held.has(last + 1)) {
      const e = this.held.get(last + 1);
      this.held.delete(last + 1);
      if (e) out.push(e);
      last++;
    }
    this.last = last;
    if (out.length > 0) this.emit(out);
    if (this.held.size === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.fill(), this.holdMs);
      this.timer.unref();
    }
  }

  /** The hole outlived holdMs: read it from the store and emit up to the highest held event. */
  private async fill(): Promise<void> {
    this.timer = null;
    if (this.closed || this.last === null || this.held.size === 0) return;
    this.filling = true;
    const from = this.last;
    const upTo = Math.max(...this.held.keys());
    // Only what lies ahead is read: the sequence never goes back.
    if (upTo <= from) {
      for (const seq of [...this.held.keys()]) if (seq <= from) this.held.delete(seq);
      this.filling = false;
      this.release([]);
      return;
    }
    let found: StoredEvent[] = [];
    try {
      found = await this.readGap(from, upTo);
    } catch {
      this.filling = false;
      if (this.closed) return;
      if (this.held.size <= this.maxHeld) {
        // Read it again a hold later; what arrived meanwhile stays held behind the hole.
        this.release([]);
        return;
      }
      // Past the cap, what is held goes on without the hole rather than wait without bound.
    }
    this.filling = false;
    if (this.closed) return;
    const merged = new Map<number, StoredEvent>();
    for (const e of found) if (e.seq > from && e.seq < upTo) merged.set(e.seq, e);
    for (const [seq, e] of this.held) if (seq <= upTo) merged.set(seq, e);
    for (const seq of merged.keys()) this.held.delete(seq);
    const out = [...merged.values()].sort((a, b) => a.seq - b.seq);
    this.last = upTo;
    this.release(out);
  }
}
