import { openSealed, seal, SealedSecretError, type SecretBox, type SecretKey } from '../domain/secrets/sealed.js';
import type { Db } from '../store/sql/db.js';
import { resealAll } from '../store/accounts/sealed-values.js';
import { KEY_CHECK_AAD, KEY_CHECK_META, KEY_CHECK_PLAINTEXT } from '../domain/secrets/columns.js';

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
  const check = seal(next, KEY_CHECK_PLAINTEXT, KEY_CHECK_AAD);
  const { secrets, answers } = await resealAll(db, reseal, KEY_CHECK_META, check);
  return { fromKeyId: current.current.id, toKeyId: next.id, secrets, answers };
}
