import { sql, type Insertable, type Kysely } from 'kysely';
import type { DisabledReason, Notification } from '@svc/schema';
import { randomBase62 } from '../../domain/keys.js';
import type { SecretBox } from '../../domain/secrets/sealed.js';
import { endpointSecretAad } from '../../domain/secrets/columns.js';
import type { Db } from '../sql/db.js';
import { insertNotification, newNotificationId } from './notifications.js';
import { dateIdKey, pageOf, type Page, type PageRequest } from '../sql/page.js';
import type { Database } from '../sql/database.js';
import { deleteEndpointDeliveries, parkPendingDeliveries } from './deliveries.js';
import type { WebhookEndpointTable } from './types.js';
import type { EndpointRow } from './rows.js';

export const newEndpointId = (): string => `we_${randomBase62(24)}`;

export interface EndpointPatch {
  url?: string;
  sports?: string[] | null;
  types?: string[] | null;
  description?: string | null;
  min_probability?: number;
}

/** An endpoint with its owner key's grants, as an attempt checks them; the key's columns are null when the key row is gone. */
export interface AttemptTargetRow {
  id: string;
  key_id: string;
  url: string;
  status: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  plan: string | null;
  products: string | null;
  revoked_at: string | null;
}

/**
 * Endpoints, always scoped to the owning key, and what the dispatcher reads of them. Endpoint
 * secrets are sealed on their way in (docs/operations.md "Secrets at rest"): rows read back carry
 * them sealed, and `webhooks/directory.ts` opens them where a request is signed. All the SQL of
 * `webhook_endpoints` is in this module.
 */
export class WebhookEndpointStore {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  async create(row: Insertable<WebhookEndpointTable>): Promise<EndpointRow> {
    const sealed = { ...row, secret: this.secrets.seal(row.secret, endpointSecretAad(row.id)), previous_secret: null };
    return this.k.insertInto('webhook_endpoints').values(sealed).returningAll().executeTakeFirstOrThrow();
  }

  async count(keyId: string): Promise<number> {
    const r = await this.k.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('key_id', '=', keyId).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async get(keyId: string, id: string): Promise<EndpointRow | undefined> {
    return this.k.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
  }

  async list(keyId: string, page: PageRequest): Promise<Page<EndpointRow>> {
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

  async update(keyId: string, id: string, patch: EndpointPatch, nowIso: string): Promise<EndpointRow | undefined> {
    return this.k
      .updateTable('webhook_endpoints')
      .set({
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(patch.sports !== undefined ? { sports: patch.sports === null ? null : JSON.stringify(patch.sports) } : {}),
        ...(patch.types !== undefined ? { types: patch.types === null ? null : JSON.stringify(patch.types) } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.min_probability !== undefined ? { min_probability: patch.min_probability } : {}),
        updated_at: nowIso,
      })
      .where('id', '=', id)
      .where('key_id', '=', keyId)
      .returningAll()
      .executeTakeFirst();
  }

  /** Deletes the endpoint with its deliveries and attempt log. */
  async delete(keyId: string, id: string): Promise<boolean> {
    return this.k.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return false;
      await deleteEndpointDeliveries(trx, id);
      return true;
    });
  }

  /** Back to enabled with a fresh auto-disable window; parked deliveries stay parked until replayed. */
  async enable(keyId: string, id: string, nowIso: string): Promise<EndpointRow | undefined> {
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

  /** The endpoints of `ids` that still exist, with their owner keys' grants (one read per claim, cached by the caller). */
  async attemptTargets(ids: string[]): Promise<AttemptTargetRow[]> {
    return this.k
      .selectFrom('webhook_endpoints as e')
      .leftJoin('api_keys as k', 'k.id', 'e.key_id')
      .select(['e.id', 'e.key_id', 'e.url', 'e.status', 'e.secret', 'e.previous_secret', 'e.previous_secret_until', 'k.plan', 'k.products', 'k.revoked_at'])
      .where('e.id', 'in', ids)
      .execute();
  }

  /** The key that owns the endpoint, if it still exists. */
  async ownerOf(endpointId: string): Promise<string | undefined> {
    const r = await this.k.selectFrom('webhook_endpoints').select('key_id').where('id', '=', endpointId).executeTakeFirst();
    return r?.key_id;
  }
}

/**
 * Moves an endpoint's health window by a batch of its attempts, in the caller's transaction: a
 * success sets `last_success_at` and the first failure after it (if any); failures alone keep the
 * window's start. Answers the endpoint as it now stands, or undefined when it is gone.
 */
export async function updateEndpointHealth(
  trx: Kysely<Database>,
  endpointId: string,
  lastSuccess: string | null,
  failingAfter: string | null,
): Promise<{ last_success_at: string | null; failing_since: string | null; status: string } | undefined> {
  return trx
    .updateTable('webhook_endpoints')
    .set(lastSuccess !== null ? { last_success_at: lastSuccess, failing_since: failingAfter } : { failing_since: sql<string>`coalesce(failing_since, ${failingAfter})` })
    .where('id', '=', endpointId)
    .returning(['last_success_at', 'failing_since', 'status'])
    .executeTakeFirst();
}

/**
 * Disables an endpoint, parks its pending deliveries as `disabled` and leaves a notification for
 * the owner. Returns the notification, or null when the endpoint was not enabled (a second
 * worker reaching the same verdict does not notify twice).
 */
export async function disableEndpoint(
  trx: Kysely<Database>,
  endpointId: string,
  reason: DisabledReason,
  nowIso: string,
  failingForS = 86_400,
): Promise<Notification | null> {
  const ep = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: nowIso, updated_at: nowIso })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .returning(['id', 'key_id', 'url'])
    .executeTakeFirst();
  if (!ep) return null;
  await parkPendingDeliveries(trx, endpointId);
  const message =
    reason === 'gone'
      ? `Webhook endpoint ${ep.id} (${ep.url}) answered 410 Gone and was disabled. Re-enable it with POST /v1/webhooks/${ep.id}/enable, then replay what it missed.`
      : `Webhook endpoint ${ep.id} (${ep.url}) was disabled after failing every delivery for ${describeSeconds(failingForS)}. Fix the receiver, re-enable it with POST /v1/webhooks/${ep.id}/enable, then replay what it missed.`;
  const row = { id: newNotificationId(), key_id: ep.key_id, type: 'webhook_endpoint.disabled', endpoint_id: ep.id, reason, message, created_at: nowIso };
  return insertNotification(trx, row);
}

function describeSeconds(s: number): string {
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`;
  if (s % 60 === 0) return `${s / 60} minute${s === 60 ? '' : 's'}`;
  return `${s} second${s === 1 ? '' : 's'}`;
}

/** Every endpoint's stored secrets, sealed as they are: the start checks the key they name. */
export async function sealedEndpointSecrets(db: Pick<Db, 'kysely'>): Promise<{ secret: string; previous_secret: string | null }[]> {
  return db.kysely.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).execute();
}

/**
 * Re-seals every endpoint's secrets with `reseal`, in the caller's transaction (a rotation of the
 * deployment key moves every sealed value or none), rows locked while rewritten when `lock`.
 * Answers how many values changed (a secret and its previous one count as two).
 */
export async function resealEndpointSecrets(
  trx: Kysely<Database>,
  lock: boolean,
  reseal: (value: string, aad: string, what: string) => string,
): Promise<number> {
  let secrets = 0;
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret', 'previous_secret'])
    .$if(lock, (q) => q.forUpdate())
    .execute();
  for (const r of endpoints) {
    const aad = endpointSecretAad(r.id);
    const secret = reseal(r.secret, aad, `the secret of webhook endpoint ${r.id}`);
    const previous = r.previous_secret === null ? null : reseal(r.previous_secret, aad, `the previous secret of webhook endpoint ${r.id}`);
    if (secret === r.secret && previous === r.previous_secret) continue;
    secrets += (secret !== r.secret ? 1 : 0) + (previous !== r.previous_secret ? 1 : 0);
    await trx.updateTable('webhook_endpoints').set({ secret, previous_secret: previous }).where('id', '=', r.id).execute();
  }
  return secrets;
}
