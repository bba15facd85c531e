import { openSealed, seal, SealedSecretError, type SecretBox, type SecretKey } from '../domain/secrets/sealed.js';
import type { Db } from '../store/db.js';
import { resealEndpointSecrets } from '../store/webhook-endpoints.js';
import { KEY_CHECK_AAD, KEY_CHECK_META, KEY_CHECK_PLAINTEXT, recordedAnswerAad } from './columns.js';

export interface RotationResult {
  fromKeyId: string;
  toKeyId: string;
  /** Endpoint secrets re-encrypted (a secret and its previous one count as two). */
  secrets: number;
  /** Recorded idempotent answers re-encrypted. */
  answers: number;
}

/**
 * Re-encrypts every sealed value under `next`, in one transaction: either all of them move to
 * the new key or none does. Values already under `next` are left as they are, so a rotation that
 * was interrupted before its key was put in place can simply be run again. On PostgreSQL the rows
 * are locked while they are rewritten.
 */
export async function rotateSecretKey(db: Db, current: SecretBox, next: SecretKey): Promise<RotationResult> {
  const keys = [...current.keys, next];
  const reseal = (value: string, aad: string, what: string): string => {
    const opened = openSealed(keys, value, aad);
    if (!opened.ok) throw new SealedSecretError(opened.reason, what);
    return opened.keyId === next.id ? value : seal(next, opened.plaintext, aad);
  };
  const pg = db.engine === 'postgres';
  return db.kysely.transaction().execute(async (trx) => {
    const secrets = await resealEndpointSecrets(trx, pg, reseal);
    let answers = 0;
    const recorded = await trx
      .selectFrom('idempotency_keys')
      .select(['key_id', 'idempotency_key', 'body'])
      .where('body', 'is not', null)
      .$if(pg, (q) => q.forUpdate())
      .execute();
    for (const r of recorded) {
      if (r.body === null) continue;
      const body = reseal(r.body, recordedAnswerAad(r.key_id, r.idempotency_key), 'a recorded idempotent answer');
      if (body === r.body) continue;
      answers++;
      await trx.updateTable('idempotency_keys').set({ body }).where('key_id', '=', r.key_id).where('idempotency_key', '=', r.idempotency_key).execute();
    }
    const check = seal(next, KEY_CHECK_PLAINTEXT, KEY_CHECK_AAD);
    await trx
      .insertInto('meta')
      .values({ key: KEY_CHECK_META, value: check })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: check }))
      .execute();
    return { fromKeyId: current.current.id, toKeyId: next.id, secrets, answers };
  });
}
