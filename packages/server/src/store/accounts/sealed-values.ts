import type { Db } from '../sql/db.js';
import { resealRecordedAnswers } from './idempotency.js';
import { metaValue, setMeta } from '../sql/meta.js';
import { resealEndpointSecrets, sealedEndpointSecrets } from '../webhooks/endpoints.js';

/** Every value sealed under the deployment key, re-sealed by `reseal` (docs/operations.md, "Secrets at rest"). */
export interface ResealResult {
  /** Endpoint secrets that changed (a secret and its previous one count as two). */
  secrets: number;
  /** Recorded idempotent answers that changed. */
  answers: number;
}

/**
 * Re-seals every sealed value with `reseal` and stores `check` as the key check, in one
 * transaction: either all of them move to the new key or none does. On PostgreSQL the rows are
 * locked while they are rewritten. Each table's statements are its owner's.
 */
export function resealAll(db: Db, reseal: (value: string, aad: string, what: string) => string, checkKey: string, check: string): Promise<ResealResult> {
  const lock = db.engine === 'postgres';
  return db.kysely.transaction().execute(async (trx) => {
    const secrets = await resealEndpointSecrets(trx, lock, reseal);
    const answers = await resealRecordedAnswers(trx, lock, reseal);
    await setMeta(trx, checkKey, check);
    return { secrets, answers };
  });
}

/** The key check stored under `checkKey`, and every sealed endpoint secret, to hold against a key. */
export async function sealedValues(db: Pick<Db, 'kysely'>, checkKey: string): Promise<{ check: string | undefined; endpointSecrets: string[] }> {
  const check = await metaValue(db.kysely, checkKey);
  const rows = await sealedEndpointSecrets(db);
  return { check, endpointSecrets: rows.flatMap((r) => (r.previous_secret === null ? [r.secret] : [r.secret, r.previous_secret])) };
}
