import { isoTime, type Clock } from '../domain/clock.js';
import type { OutboxHook, StoredEvent } from '../store/events/events.js';
import { insertDeliveries, newDeliveryIds, pendingDelivery, type NewDelivery } from '../store/webhooks/deliveries.js';
import { subscribers, type Subscriber } from '../store/webhooks/endpoints.js';

/**
 * Webhooks carry confirmed events (docs/webhooks.md): scores, status changes and corrections (a
 * confirmed `score_retracted`, docs/corrections.md); never provisional events or their retractions.
 */
export const webhookable = (e: { tier: string; type: string }): boolean => e.tier === 'confirmed' && (e.type === 'score' || e.type === 'status' || e.type === 'score_retracted');

/** The endpoint wants the event's sport, and its owner may see the event: its sport, league and game (docs/replays.md). */
export function subscribes(s: Subscriber, e: StoredEvent): boolean {
  const { sport, league } = e;
  if (e.ownerKeyId && e.ownerKeyId !== s.keyId) return false;
  if (s.types && !s.types.includes(e.event.type)) return false;
  if (s.sports && !s.sports.includes(sport)) return false;
  if (s.keySports && !s.keySports.includes(sport)) return false;
  if (s.keyLeagues && !s.keyLeagues.includes(league)) return false;
  return true;
}

/**
 * The EventLog hook: one pending delivery per (webhookable event, subscribed endpoint),
 * written with the events' own transaction so neither can exist without the other.
 */
export function outboxHook(clock: Clock, afterWrite: () => void): OutboxHook {
  return async (tx, appended) => {
    // Most appends (provisionals, retractions) have no delivery to write: they never wait for the stored events.
    if (!appended.fields.some(webhookable)) return;
    const due = (await appended.stored()).filter((e) => webhookable(e.event));
    const trx = await tx.builder();
    const subs = await subscribers(trx);
    if (subs.length === 0) return;
    const pairs: [Subscriber, StoredEvent][] = [];
    for (const e of due) for (const s of subs) if (subscribes(s, e)) pairs.push([s, e]);
    if (pairs.length === 0) return;
    const nowMs = clock.now();
    const now = isoTime(nowMs);
    const ids = newDeliveryIds(pairs.length, nowMs);
    const rows: NewDelivery[] = pairs.map(([s, e], i) => pendingDelivery(ids[i], s.id, e.seq, now));
    await insertDeliveries(trx, rows);
    afterWrite();
  };
}
