import type { Redis } from 'ioredis';
import type { StoredEvent } from '../store/events.js';
import type { EventBus } from './bus.js';
import { ChannelSubscription, redisKnownAway } from './link.js';
import type { RedisKeys } from './redis-keys.js';

/** Redis pub/sub bus: one channel per deployment (its prefix), JSON batches; the subscriber uses its own connection. */
export class RedisBus implements EventBus {
  private handlers = new Set<(events: StoredEvent[]) => void>();
  private readonly resumeHandlers = new Set<() => void>();
  private readonly subscription: ChannelSubscription;
  private readonly channel: string;
  private readonly away: () => boolean;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    keys: RedisKeys,
  ) {
    this.channel = keys.events;
    this.away = redisKnownAway(pub);
    this.sub.on('message', (ch: string, message: string) => {
      if (ch !== this.channel) return;
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
    // Known away: straight to this node's streams, not through ioredis' queue (bus/link.ts).
    if (this.away()) {
      for (const h of this.handlers) h(events);
      return;
    }
    try {
      // Not subscribed ourselves (the try failed): this node's streams would miss what it publishes.
      const failed = await this.subscription.ensure();
      if (failed) throw failed;
      await this.pub.publish(this.channel, JSON.stringify(events));
    } catch {
      for (const h of this.handlers) h(events);
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
