import type { Clock } from '../domain/clock.js';
import type { OutboxHook } from '../store/events/events.js';
import { routeDeliveries } from '../store/webhooks/deliveries.js';

/**
 * Webhooks carry confirmed events (docs/webhooks.md): scores, status changes and corrections (a
 * confirmed `score_retracted`, docs/corrections.md); never provisional events or their retractions.
 */
export const webhookable = (e: { tier: string; type: string }): boolean => e.tier === 'confirmed' && (e.type === 'score' || e.type === 'status' || e.type === 'score_retracted');

/**
 * The EventLog hook: one pending delivery per (webhookable event, subscribed endpoint),
 * written with the events' own transaction so neither can exist without the other. The
 * endpoints are chosen by the statement that writes the deliveries (store/webhooks/deliveries.ts
 * `routeDeliveries`), which travels with the append's other writes; once they are committed the
 * events that got deliveries say so (StoredEvent.webhooks) and the dispatcher is woken.
 */
export function outboxHook(clock: Clock, afterWrite: () => void): OutboxHook {
  return async (tx, appended) => {
    // Most appends (provisionals, retractions) have no delivery to write.
    const due = appended.events.filter((e) => webhookable(e.fields));
    if (due.length === 0) return;
    const nowMs = clock.now();
    const routed = due.map((e) => ({
      e,
      ids: routeDeliveries(tx, { seq: e.seq, id: e.id, type: e.fields.type, sport: e.fields.sport, league: e.fields.league, ownerKeyId: e.fields.owner_key_id || null, probability: e.fields.probability }, nowMs),
    }));
    tx.afterCommit(() => {
      for (const r of routed) r.e.webhooks = r.ids.rows.length > 0;
      if (routed.some((r) => r.e.webhooks)) afterWrite();
    });
  };
}
