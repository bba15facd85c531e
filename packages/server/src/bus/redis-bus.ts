import type { Redis } from 'ioredis';
import type { StoredEvent } from '../store/events.js';
import type { EventBus } from './bus.js';
import type { RedisKeys } from './redis-keys.js';

/** Redis pub/sub bus: one channel per deployment (its prefix), JSON batches; the subscriber uses its own connection. */
export class RedisBus implements EventBus {
  private handlers = new Set<(events: StoredEvent[]) => void>();
  private ready: Promise<unknown>;
  private readonly channel: string;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    keys: RedisKeys,
  ) {
    this.channel = keys.events;
    this.sub.on('message', (ch: string, message: string) => {
      if (ch !== this.channel) return;
      const events: StoredEvent[] = JSON.parse(message);
      for (const h of this.handlers) h(events);
    });
    this.ready = this.sub.subscribe(this.channel);
  }

  async publish(events: StoredEvent[]): Promise<void> {
    await this.ready;
    await this.pub.publish(this.channel, JSON.stringify(events));
  }

  subscribe(handler: (events: StoredEvent[]) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async whenReady(): Promise<void> {
    await this.ready;
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await this.sub.unsubscribe(this.channel).catch(() => undefined);
    this.sub.disconnect();
  }
}
