import { isoTime, type Clock } from '../domain/clock.js';
import type { OutboxHook } from '../store/events/events.js';
import { insertOutboxDeliveries, newDeliveryIds, type OutboxDelivery } from '../store/webhooks/deliveries.js';
import { subscribers, type Subscriber } from '../store/webhooks/endpoints.js';

/** Webhooks carry confirmed scoring events and status changes (docs/webhooks.md), never provisional or retractions. */
export const webhookable = (e: { tier: string; type: string }): boolean => e.tier === 'confirmed' && (e.type === 'score' || e.type === 'status');

/** What routing an event to an endpoint looks at. */
export interface Routed {
  type: string;
  sport: string;
  league: string;
  /** The key that alone may see the event (a sandbox replay's), null for everyone. */
  ownerKeyId: string | null;
}

/** The endpoint wants the event's sport, and its owner may see the event: its sport, league and game (docs/replays.md). */
export function subscribes(s: Subscriber, e: Routed): boolean {
  const { sport, league } = e;
  if (e.ownerKeyId && e.ownerKeyId !== s.keyId) return false;
  if (s.types && !s.types.includes(e.type)) return false;
  if (s.sports && !s.sports.includes(sport)) return false;
  if (s.keySports && !s.keySports.includes(sport)) return false;
  if (s.keyLeagues && !s.keyLeagues.includes(league)) return false;
  return true;
}

/**
 * The EventLog hook: one pending delivery per (webhookable event, subscribed endpoint),
 * written with the events' own transaction so neither can exist without the other. The
 * endpoints are read in that transaction (one round trip, which carries the append's writes so
 * far); the deliveries go with its commit, naming the events as the append does, and the
 * dispatcher is woken once they are committed.
 */
export function outboxHook(clock: Clock, afterWrite: () => void): OutboxHook {
  return async (tx, appended) => {
    // Most appends (provisionals, retractions) have no delivery to write: they never read the endpoints.
    const due = appended.events.filter((e) => webhookable(e.fields));
    if (due.length === 0) return;
    const subs = await subscribers(tx);
    if (subs.length === 0) return;
    const pairs: [Subscriber, (typeof due)[number]][] = [];
    for (const e of due) {
      const routed: Routed = { type: e.fields.type, sport: e.fields.sport, league: e.fields.league, ownerKeyId: e.fields.owner_key_id ?? null };
      for (const s of subs) if (subscribes(s, routed)) pairs.push([s, e]);
    }
    if (pairs.length === 0) return;
    const nowMs = clock.now();
    const ids = newDeliveryIds(pairs.length, nowMs);
    const rows: OutboxDelivery[] = pairs.map(([s, e], i) => {
      e.webhooks = true;
      return { id: ids[i], endpointId: s.id, eventSeq: e.seq, eventId: e.id };
    });
    insertOutboxDeliveries(tx, rows, isoTime(nowMs));
    tx.afterCommit(afterWrite);
  };
}
