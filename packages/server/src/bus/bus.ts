import type { StoredEvent } from '../store/events/events.js';

/**
 * Fan-out of appended events to every node's stream gateway. In one process it is a direct
 * call; in a cluster every node publishes to and hears from Redis, so all nodes (the publisher
 * included) deliver through the same path.
 */
export interface EventBus {
  publish(events: StoredEvent[]): Promise<void>;
  subscribe(handler: (events: StoredEvent[]) => void): () => void;
  /**
   * Called each time the bus is back after an outage: what was published meanwhile may not have
   * arrived, so a listener reads it from the store (stream/gateway.ts).
   */
  onResume(handler: () => void): () => void;
  /**
   * Whether events other nodes publish reach this node now. While they do not (Redis known
   * away), a listener that waits to be told of other nodes' writes must look in the store itself
   * (webhooks/dispatcher.ts).
   */
  hearsOthers(): boolean;
  close(): Promise<void>;
}

export class LocalBus implements EventBus {
  private handlers = new Set<(events: StoredEvent[]) => void>();
  async publish(events: StoredEvent[]): Promise<void> {
    for (const h of this.handlers) h(events);
  }
  subscribe(handler: (events: StoredEvent[]) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  /** In one process nothing is ever lost on the way. */
  onResume(): () => void {
    return () => undefined;
  }
  hearsOthers(): boolean {
    return true;
  }
  async close(): Promise<void> {
    this.handlers.clear();
  }
}
