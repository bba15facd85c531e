import type { Kysely } from 'kysely';
import { isoTime, type Clock } from '../domain/clock.js';
import type { OutboxHook, StoredEvent } from '../store/events.js';
import type { Database } from '../store/types.js';
import { insertDeliveries, newDeliveryIds, pendingDelivery, type NewDelivery } from './repo.js';
import { parseList } from './records.js';

/** An enabled endpoint with its owner's grants, as the outbox needs them to route an event. */
export interface Subscriber {
  id: string;
  /** The endpoint's key: a sandbox replay's events go to its owner key's endpoints only. */
  keyId: string;
  sports: string[] | null;
  keySports: string[] | null;
  keyLeagues: string[] | null;
}

const webhookable = (e: StoredEvent): boolean => e.event.tier === 'confirmed' && e.event.type === 'score';

/** The endpoint wants the event's sport, and its owner may see the event: its sport, league and game (docs/replays.md). */
export function subscribes(s: Subscriber, e: StoredEvent): boolean {
  const { sport, league } = e.event;
  if (e.ownerKeyId && e.ownerKeyId !== s.keyId) return false;
  if (s.sports && !s.sports.includes(sport)) return false;
  if (s.keySports && !s.keySports.includes(sport)) return false;
  if (s.keyLeagues && !s.keyLeagues.includes(league)) return false;
  return true;
}

/**
 * Enabled endpoints whose owner key is not revoked and still holds `live`. Read inside the
 * append transaction, so an endpoint created or disabled concurrently is seen consistently with
 * the events being written.
 */
export async function subscribers(trx: Kysely<Database>): Promise<Subscriber[]> {
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .innerJoin('api_keys', 'api_keys.id', 'webhook_endpoints.key_id')
    .select(['webhook_endpoints.id', 'webhook_endpoints.key_id', 'webhook_endpoints.sports', 'api_keys.products', 'api_keys.sports as key_sports', 'api_keys.leagues as key_leagues'])
    .where('webhook_endpoints.status', '=', 'enabled')
    .where('webhook_endpoints.tier', '=', 'confirmed')
    .where('api_keys.revoked_at', 'is', null)
    .execute();
  return rows
    .filter((r) => (parseList(r.products) ?? []).includes('live'))
    .map((r) => ({ id: r.id, keyId: r.key_id, sports: parseList(r.sports), keySports: parseList(r.key_sports), keyLeagues: parseList(r.key_leagues) }));
}

/**
 * The EventLog hook: one pending delivery per (confirmed score event, subscribed endpoint),
 * written with the events' own transaction so neither can exist without the other.
 */
export function outboxHook(clock: Clock, afterWrite: () => void): OutboxHook {
  return async (trx, events) => {
    const due = events.filter(webhookable);
    if (due.length === 0) return;
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
