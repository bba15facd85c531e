import type { Redis } from 'ioredis';
import type { StoredEvent } from '../store/events/events.js';
import type { EventBus } from './bus.js';
import { ChannelSubscription, redisKnownAway } from './link.js';
import type { RedisKeys } from './redis-keys.js';

const OWN_BATCHES_MAX = 10_000;

/** Redis pub/sub bus: one channel per deployment (its prefix), JSON batches; the subscriber uses its own connection. */
export class RedisBus implements EventBus {
  private handlers = new Set<(events: StoredEvent[]) => void>();
  private readonly resumeHandlers = new Set<() => void>();
  private readonly subscription: ChannelSubscription;
  private readonly channel: string;
  private readonly away: () => boolean;
  /**
   * Batches this node published and already handed to its own listeners, as the text it sent
   * (unique: each holds its own seqs): Redis's echo of them is skipped before it is parsed, which
   * was a parse of every event the node wrote (bench/history/2026-12-07.md). Bounded: a batch
   * whose echo never comes (Redis lost it) is forgotten with the rest when the bound is reached.
   */
  private readonly ownBatches = new Set<string>();

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    keys: RedisKeys,
  ) {
    this.channel = keys.events;
    this.away = redisKnownAway(pub);
    this.sub.on('message', (ch: string, message: string) => {
      if (ch !== this.channel || this.ownBatches.delete(message)) return;
      const events: StoredEvent[] = JSON.parse(message);
      for (const h of this.handlers) h(events);
    });
    // Without a listener ioredis prints every refused reconnect as an unhandled error event.
    this.sub.on('error', () => undefined);
    this.subscription = new ChannelSubscription(this.sub, this.channel);
    // ioredis subscribes again by itself on each reconnect; what others published while the
    // connection was down never arrives, so listeners are told to read it from the store.
    let connected = false;
    this.sub.on('ready', () => {
      if (connected) for (const h of this.resumeHandlers) h();
      connected = true;
    });
  }

  /**
   * Never fails: the events are stored before they are published. While Redis is away they reach
   * this node's own streams directly; other nodes read them from the store as the hole before
   * the next event the bus carries them (stream/sequencer.ts), so nothing is lost and a report is
   * not refused for want of the bus (docs/operations.md, "Faults").
   */
  async publish(events: StoredEvent[]): Promise<void> {
    // This node's own listeners (its streams, the feed's health) first, directly: waiting for
    // Redis's echo of its own publish cost every frame a round trip and a parse
    // (bench/history/2026-11-29.md "The cluster's report path"). Other nodes get the batch through Redis.
    for (const h of this.handlers) h(events);
    // Known away: not through ioredis' queue (bus/link.ts); other nodes read the hole from the store.
    if (this.away() || events.length === 0) return;
    // The streams queued their frames' write as a microtask (stream/connection.ts): it goes first,
    // ahead of this batch's JSON and its command to Redis.
    await Promise.resolve();
    const batch = JSON.stringify(events);
    if (this.ownBatches.size >= OWN_BATCHES_MAX) this.ownBatches.clear();
    this.ownBatches.add(batch);
    try {
      await this.pub.publish(this.channel, batch);
    } catch {
      this.ownBatches.delete(batch);
    }
  }

  subscribe(handler: (events: StoredEvent[]) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  onResume(handler: () => void): () => void {
    this.resumeHandlers.add(handler);
    return () => this.resumeHandlers.delete(handler);
  }

  /** Both connections go to the same Redis: known away through the publisher's, nothing arrives. */
  hearsOthers(): boolean {
    return !this.away();
  }

  async whenReady(): Promise<void> {
    const failed = await this.subscription.ensure();
    if (failed) throw failed;
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.resumeHandlers.clear();
    await this.sub.unsubscribe(this.channel).catch(() => undefined);
    this.sub.disconnect();
  }
}
