import { sql, type Insertable, type Kysely } from 'kysely';
import { randomBase62 } from '../domain/keys.js';
import type { SecretBox } from '../domain/secrets/sealed.js';
import { endpointSecretAad } from '../secrets/columns.js';
import type { Db } from '../store/db.js';
import { confirmedScoreSeqs, type ReplayScope } from '../store/events.js';
import { dateIdKey, pageOf, type Page, type PageRequest } from '../store/page.js';
import type { Database } from '../store/types.js';
import type { WebhookDeliveryTable, WebhookEndpointTable } from '../store/webhook-types.js';
import { eventId, type DeliveryStatus, type DisabledReason, type Notification, type WebhookAttempt, type WebhookDelivery } from '@svc/schema';
import { attemptRecord, deliveryRecord, notificationRecord, type EndpointRow } from './records.js';

export const newEndpointId = (): string => `we_${randomBase62(24)}`;
const SORTABLE = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Delivery ids lead with the time (fixed-width, in byte order) and end with 16 random base62
 * characters: a fan-out of one event to many endpoints appends to the end of the primary-key
 * index instead of touching random pages, which is most of what an insert costs.
 */
export function newDeliveryIds(n: number, nowMs: number): string[] {
  let time = '';
  for (let v = Math.max(0, Math.floor(nowMs)); time.length < 8; v = Math.floor(v / 62)) time = SORTABLE[v % 62] + time;
  const random = randomBase62(16 * n);
  return Array.from({ length: n }, (_, i) => `dlv_${time}${random.slice(16 * i, 16 * i + 16)}`);
}
export const newNotificationId = (): string => `ntf_${randomBase62(20)}`;

/** SQLite allows 32,766 bound values per statement; 14 columns × 500 rows stays far below. */
const INSERT_CHUNK = 500;

export type NewDelivery = Insertable<WebhookDeliveryTable>;

export function pendingDelivery(id: string, endpointId: string, seq: number, nowIso: string, replayOf: string | null = null): NewDelivery {
  return {
    id,
    endpoint_id: endpointId,
    event_id: eventId(seq),
    event_seq: seq,
    status: 'pending',
    attempts: 0,
    next_attempt_at: nowIso,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    claim_token: null,
    replay_of: replayOf,
    created_at: nowIso,
    delivered_at: null,
  };
}

export async function insertDeliveries(db: Kysely<Database>, rows: NewDelivery[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db.insertInto('webhook_deliveries').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }
}

/**
 * Disables an endpoint, parks its pending deliveries as `disabled` and leaves a notification for
 * the owner. Returns the notification, or null when the endpoint was not enabled (a second
 * worker reaching the same verdict does not notify twice).
 */
export async function disableEndpoint(
  db: Kysely<Database>,
  endpointId: string,
  reason: DisabledReason,
  nowIso: string,
  failingForS = 86_400,
): Promise<Notification | null> {
  const ep = await db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: nowIso, updated_at: nowIso })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .returning(['id', 'key_id', 'url'])
    .executeTakeFirst();
  if (!ep) return null;
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'disabled', next_attempt_at: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
  const message =
    reason === 'gone'
      ? `Webhook endpoint ${ep.id} (${ep.url}) answered 410 Gone and was disabled. Re-enable it with POST /v1/webhooks/${ep.id}/enable, then replay what it missed.`
      : `Webhook endpoint ${ep.id} (${ep.url}) was disabled after failing every delivery for ${describeSeconds(failingForS)}. Fix the receiver, re-enable it with POST /v1/webhooks/${ep.id}/enable, then replay what it missed.`;
  const row = { id: newNotificationId(), key_id: ep.key_id, type: 'webhook_endpoint.disabled', endpoint_id: ep.id, reason, message, created_at: nowIso };
  await db.insertInto('notifications').values(row).execute();
  return notificationRecord(row);
}

function describeSeconds(s: number): string {
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`;
  if (s % 60 === 0) return `${s / 60} minute${s === 60 ? '' : 's'}`;
  return `${s} second${s === 1 ? '' : 's'}`;
}

export interface EndpointPatch {
  url?: string;
  sports?: string[] | null;
  description?: string | null;
}

/**
 * Storage of endpoints, deliveries and notifications, always scoped to the owning key. Endpoint
 * secrets are sealed on their way in (docs/operations.md "Secrets at rest"): rows read back
 * carry them sealed, and `directory.ts` opens them where a request is signed.
 */
export class WebhookRepo {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  async createEndpoint(row: Insertable<WebhookEndpointTable>): Promise<EndpointRow> {
    const sealed = { ...row, secret: this.secrets.seal(row.secret, endpointSecretAad(row.id)), previous_secret: null };
    return this.k.insertInto('webhook_endpoints').values(sealed).returningAll().executeTakeFirstOrThrow();
  }

  async countEndpoints(keyId: string): Promise<number> {
    const r = await this.k.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('key_id', '=', keyId).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async endpoint(keyId: string, id: string): Promise<EndpointRow | undefined> {
    return this.k.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
  }

  async listEndpoints(keyId: string, page: PageRequest): Promise<Page<EndpointRow>> {
    const after = dateIdKey(page.cursor);
    const rows = await this.k
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('key_id', '=', keyId)
      .$if(after !== undefined, (q) => q.where(sql<boolean>`(created_at, id) > (${after?.[0] ?? ''}, ${after?.[1] ?? ''})`))
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], (r) => r);
  }

  async updateEndpoint(keyId: string, id: string, patch: EndpointPatch, nowIso: string): Promise<EndpointRow | undefined> {
    return this.k
      .updateTable('webhook_endpoints')
      .set({
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(patch.sports !== undefined ? { sports: patch.sports === null ? null : JSON.stringify(patch.sports) } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        updated_at: nowIso,
      })
      .where('id', '=', id)
      .where('key_id', '=', keyId)
      .returningAll()
      .executeTakeFirst();
  }

  /** Deletes the endpoint with its deliveries and attempt log. */
  async deleteEndpoint(keyId: string, id: string): Promise<boolean> {
    return this.k.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return false;
      await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      return true;
    });
  }

  /** Back to enabled with a fresh auto-disable window; parked deliveries stay parked until replayed. */
  async enableEndpoint(keyId: string, id: string, nowIso: string): Promise<EndpointRow | undefined> {
    return this.k
      .updateTable('webhook_endpoints')
      .set({ status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null, updated_at: nowIso })
      .where('id', '=', id)
      .where('key_id', '=', keyId)
      .returningAll()
      .executeTakeFirst();
  }

  async rotateSecret(keyId: string, id: string, secret: string, previousUntilIso: string, nowIso: string): Promise<EndpointRow | undefined> {
    return this.k
      .updateTable('webhook_endpoints')
      .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_until: previousUntilIso, secret: this.secrets.seal(secret, endpointSecretAad(id)), updated_at: nowIso }))
      .where('id', '=', id)
      .where('key_id', '=', keyId)
      .returningAll()
      .executeTakeFirst();
  }

  async listDeliveries(endpointId: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<Page<WebhookDelivery>> {
    const before = dateIdKey(page.cursor);
    const rows = await this.k
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .$if(status !== undefined, (q) => q.where('status', '=', status ?? 'pending'))
      .$if(before !== undefined, (q) => q.where(sql<boolean>`(created_at, id) < (${before?.[0] ?? ''}, ${before?.[1] ?? ''})`))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], deliveryRecord);
  }

  async delivery(endpointId: string, id: string): Promise<{ delivery: WebhookDelivery; seq: number; attempts: WebhookAttempt[] } | undefined> {
    const row = await this.k.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('endpoint_id', '=', endpointId).executeTakeFirst();
    if (!row) return undefined;
    const attempts = await this.k.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute();
    return { delivery: deliveryRecord(row), seq: row.event_seq, attempts: attempts.map(attemptRecord) };
  }

  /** Confirmed score events with ts in [from, to) that the filter admits, by sequence; at most `max` + 1 (read from the event log). */
  replayableEvents(filter: ReplayScope, fromIso: string, toIso: string, max: number): Promise<number[]> {
    return confirmedScoreSeqs(this.db, filter, fromIso, toIso, max);
  }

  async addDeliveries(rows: NewDelivery[]): Promise<void> {
    await this.k.transaction().execute((trx) => insertDeliveries(trx, rows));
  }

  async listNotifications(keyId: string, page: PageRequest): Promise<Page<Notification>> {
    const before = dateIdKey(page.cursor);
    const rows = await this.k
      .selectFrom('notifications')
      .selectAll()
      .where('key_id', '=', keyId)
      .$if(before !== undefined, (q) => q.where(sql<boolean>`(created_at, id) < (${before?.[0] ?? ''}, ${before?.[1] ?? ''})`))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], notificationRecord);
  }
}
