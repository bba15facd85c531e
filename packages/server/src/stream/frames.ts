import type { Event } from '@svc/schema';
import type { StoredEvent } from '../store/events.js';

/** The stream/webhook view of an event: the spec's fields plus `id` (and the additive links). */
export function wireEvent(e: Event): Record<string, unknown> {
  return {
    id: e.id,
    type: e.type,
    tier: e.tier,
    game_id: e.game_id,
    team: e.team,
    points: e.points,
    ts: e.ts,
    confidence: e.confidence,
    ...(e.provisional_id !== undefined ? { provisional_id: e.provisional_id } : {}),
    ...(e.retracted_id !== undefined ? { retracted_id: e.retracted_id } : {}),
    schema: e.schema,
  };
}

const serialised = new WeakMap<StoredEvent, Buffer>();

/** Serialised once per event, whatever the number of sockets it goes to. */
export function frameBytes(e: StoredEvent): Buffer {
  let b = serialised.get(e);
  if (!b) {
    b = Buffer.from(JSON.stringify(wireEvent(e.event)));
    serialised.set(e, b);
  }
  return b;
}
