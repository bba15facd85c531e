import type { Kysely } from 'kysely';
import { randomBase62 } from '../../domain/keys.js';
import type { SecretBox } from '../../domain/secrets/sealed.js';
import { recordedAnswerAad } from '../../domain/secrets/columns.js';
import type { Db } from '../sql/db.js';
import type { IdempotencyTable } from './types.js';
import type { Database } from '../sql/database.js';

export type IdempotencyRow = IdempotencyTable;

/** The outcome of claiming a key: ours to run, or someone's earlier row to answer from. */
export type Claim = { kind: 'claimed'; token: string } | { kind: 'existing'; row: IdempotencyRow };

export interface ClaimRequest {
  keyId: string;
  idempotencyKey: string;
  fingerprint: string;
  now: number;
  ttlMs: number;
  /** An in-flight row older than this is a request whose process died: it may be taken over. */
  inFlightLeaseMs: number;
}

/**
 * Rows of `idempotency_keys`: one per (API key, Idempotency-Key) while it is kept. Recorded
 * answers are sealed (createWebhook and rotateWebhookSecret answers carry the endpoint secret):
 * docs/operations.md "Secrets at rest".
 */
export class IdempotencyRepo {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Inserts an in-flight row, or takes over one that expired or was abandoned; otherwise answers
   * the row that holds the key. The primary key makes concurrent claims of one key race safely on
   * both engines and across nodes: exactly one insert or takeover wins.
   */
  async claim(r: ClaimRequest): Promise<Claim> {
    const k = this.db.kysely;
    for (let tries = 0; tries < 3; tries++) {
      const token = randomBase62(16);
      const fresh = {
        fingerprint: r.fingerprint,
        claim_token: token,
        state: 'in_flight' as const,
        request_id: null,
        status_code: null,
        content_type: null,
        body: null,
        created_at: r.now,
        expires_at: r.now + r.ttlMs,
      };
      const inserted = await k
        .insertInto('idempotency_keys')
        .values({ key_id: r.keyId, idempotency_key: r.idempotencyKey, ...fresh })
        .onConflict((oc) => oc.columns(['key_id', 'idempotency_key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: 'claimed', token };
      const row = await k
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('key_id', '=', r.keyId)
        .where('idempotency_key', '=', r.idempotencyKey)
        .executeTakeFirst();
      if (!row) continue; // purged between the insert and the read
      const expired = Number(row.expires_at) <= r.now;
      const abandoned = row.state === 'in_flight' && Number(row.created_at) + r.inFlightLeaseMs <= r.now;
      if (!expired && !abandoned) {
        const body = row.body === null ? null : this.secrets.open(row.body, recordedAnswerAad(r.keyId, r.idempotencyKey), 'a recorded idempotent answer');
        return { kind: 'existing', row: { ...row, body, created_at: Number(row.created_at), expires_at: Number(row.expires_at) } };
      }
      const taken = await k
        .updateTable('idempotency_keys')
        .set(fresh)
        .where('key_id', '=', r.keyId)
        .where('idempotency_key', '=', r.idempotencyKey)
        .where('claim_token', '=', row.claim_token)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) > 0) return { kind: 'claimed', token };
    }
    throw new Error('idempotency key contended by concurrent takeovers');
  }

  /** Records the answer of the claim `token`; later requests with the key replay it. */
  async complete(keyId: string, idempotencyKey: string, token: string, response: { requestId: string; statusCode: number; contentType: string | null; body: string }): Promise<void> {
    await this.db.kysely
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        request_id: response.requestId,
        status_code: response.statusCode,
        content_type: response.contentType,
        body: this.secrets.seal(response.body, recordedAnswerAad(keyId, idempotencyKey)),
      })
      .where('key_id', '=', keyId)
      .where('idempotency_key', '=', idempotencyKey)
      .where('claim_token', '=', token)
      .execute();
  }

  /** Forgets the claim `token` (its request ended without an answer worth replaying). */
  async release(keyId: string, idempotencyKey: string, token: string): Promise<void> {
    await this.db.kysely
      .deleteFrom('idempotency_keys')
      .where('key_id', '=', keyId)
      .where('idempotency_key', '=', idempotencyKey)
      .where('claim_token', '=', token)
      .execute();
  }

  async purgeExpired(now: number): Promise<number> {
    const res = await this.db.kysely.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

/**
 * Re-seals every recorded answer with `reseal`, in the caller's transaction (a rotation of the
 * deployment key moves every sealed value or none), rows locked while rewritten when `lock`.
 * Returns how many changed.
 */
export async function resealRecordedAnswers(trx: Kysely<Database>, lock: boolean, reseal: (value: string, aad: string, what: string) => string): Promise<number> {
  let answers = 0;
  const recorded = await trx
    .selectFrom('idempotency_keys')
    .select(['key_id', 'idempotency_key', 'body'])
    .where('body', 'is not', null)
    .$if(lock, (q) => q.forUpdate())
    .execute();
  for (const r of recorded) {
    if (r.body === null) continue;
    const body = reseal(r.body, recordedAnswerAad(r.key_id, r.idempotency_key), 'a recorded idempotent answer');
    if (body === r.body) continue;
    answers++;
    await trx.updateTable('idempotency_keys').set({ body }).where('key_id', '=', r.key_id).where('idempotency_key', '=', r.idempotency_key).execute();
  }
  return answers;
}
