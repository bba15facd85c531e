/**
 * Secrets at rest (`docs/operations.md` "Secrets at rest"): values the service must read back in
 * clear (webhook endpoint secrets, recorded idempotent answers that carry one) are stored sealed
 * with AES-256-GCM under the deployment's key, `SVC_SECRET_KEY`.
 *
 * A sealed value is text: `svc1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id
 * names the key that sealed it, so a rotation can tell what is left to re-encrypt and a wrong key
 * is named as such instead of looking like tampering. The associated data binds a value to the
 * row it belongs to: a sealed secret copied onto another row does not open there.
 *
 * Pure: imports nothing but node:crypto; failures are typed, never thrown from `openSealed`.
 */
import crypto from 'node:crypto';

export const SEALED_PREFIX = 'svc1.';
export const SECRET_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_HEX = 16;
/** Far above any value we seal (an answer body is bounded by the body limit); refuses garbage early. */
const MAX_SEALED_LENGTH = 64 * 1024 * 1024;

export type KeyParseFailure = 'missing' | 'not_hex' | 'wrong_length';
export type OpenFailureReason = 'malformed' | 'unknown_key' | 'tampered';
export type OpenResult = { ok: true; plaintext: string; keyId: string } | { ok: false; reason: OpenFailureReason };

/** One AES-256 key and its id. The bytes are kept off enumerable fields so a log of the object shows the id only. */
export class SecretKey {
  readonly id: string;
  readonly #bytes: Buffer;
  constructor(bytes: Buffer) {
    if (bytes.length !== SECRET_KEY_BYTES) throw new RangeError(`a secret key is ${SECRET_KEY_BYTES} bytes, got ${bytes.length}`);
    this.#bytes = Buffer.from(bytes);
    this.id = keyIdOf(this.#bytes);
  }
  /** The key as 64 lowercase hex characters (for the sandbox key file). */
  toHex(): string {
    return this.#bytes.toString('hex');
  }
  bytes(): Buffer {
    return this.#bytes;
  }
  toJSON(): string {
    return `SecretKey(${this.id})`;
  }
}

export class SealedSecretError extends Error {
  readonly reason: OpenFailureReason;
  constructor(reason: OpenFailureReason, what: string) {
    super(
      reason === 'unknown_key'
        ? `${what} was sealed under another SVC_SECRET_KEY than this one`
        : reason === 'tampered'
          ? `${what} failed its authentication tag: it was altered, or belongs to another row`
          : `${what} is not a sealed value`,
    );
    this.name = 'SealedSecretError';
    this.reason = reason;
  }
}

/** The key id: a keyed hash of the key, so the id says nothing about the key's bytes. */
export function keyIdOf(key: Buffer): string {
  return crypto.createHmac('sha256', key).update('svc secret key id').digest('hex').slice(0, KEY_ID_HEX);
}

/** Parses 64 hex characters (either case) into a key. */
export function parseSecretKey(hex: string | undefined): { ok: true; key: SecretKey } | { ok: false; reason: KeyParseFailure } {
  if (hex === undefined || hex === '') return { ok: false, reason: 'missing' };
  const text = hex.trim();
  if (!/^[0-9a-fA-F]*$/.test(text)) return { ok: false, reason: 'not_hex' };
  if (text.length !== SECRET_KEY_BYTES * 2) return { ok: false, reason: 'wrong_length' };
  return { ok: true, key: new SecretKey(Buffer.from(text, 'hex')) };
}

export function generateSecretKey(): SecretKey {
  return new SecretKey(crypto.randomBytes(SECRET_KEY_BYTES));
}

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

/** Seals `plaintext` under `key`, bound to `aad` (the owning row's identity). A fresh random IV each time. */
export function seal(key: SecretKey, plaintext: string, aad: string): string {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key.bytes(), iv);
  cipher.setAAD(Buffer.from(`${key.id}|${aad}`, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `${SEALED_PREFIX}${key.id}.${iv.toString('base64url')}.${ct.toString('base64url')}.${tag.toString('base64url')}`;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

/** The key id a sealed value names, or null when it is not one. */
export function sealedKeyId(sealed: string): string | null {
  if (!isSealed(sealed)) return null;
  const id = sealed.slice(SEALED_PREFIX.length, SEALED_PREFIX.length + KEY_ID_HEX);
  return /^[0-9a-f]{16}$/.test(id) && sealed[SEALED_PREFIX.length + KEY_ID_HEX] === '.' ? id : null;
}

/**
 * Opens a sealed value with whichever of `keys` sealed it. Never throws: a value that is not
 * sealed, names a key we do not hold, or fails the tag (altered bytes, another row's AAD) is a
 * typed failure.
 */
export function openSealed(keys: readonly SecretKey[], sealed: string, aad: string): OpenResult {
  if (typeof sealed !== 'string' || sealed.length > MAX_SEALED_LENGTH || !isSealed(sealed)) return { ok: false, reason: 'malformed' };
  const parts = sealed.slice(SEALED_PREFIX.length).split('.');
  if (parts.length !== 4) return { ok: false, reason: 'malformed' };
  const [id, ivText, ctText, tagText] = parts;
  if (!/^[0-9a-f]{16}$/.test(id) || !B64URL.test(ivText) || !B64URL.test(ctText) || !B64URL.test(tagText)) return { ok: false, reason: 'malformed' };
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  const ct = Buffer.from(ctText, 'base64url');
  // Exact lengths (GCM accepts shorter tags, which would weaken the check) and canonical text:
  // base64 ignores a last character's spare bits, so two spellings would open as one value.
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return { ok: false, reason: 'malformed' };
  if (iv.toString('base64url') !== ivText || tag.toString('base64url') !== tagText || ct.toString('base64url') !== ctText) return { ok: false, reason: 'malformed' };
  const key = keys.find((k) => k.id === id);
  if (!key) return { ok: false, reason: 'unknown_key' };
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key.bytes(), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${key.id}|${aad}`, 'utf8'));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(ct), decipher.final()]);
    return { ok: true, plaintext: plain.toString('utf8'), keyId: key.id };
  } catch {
    return { ok: false, reason: 'tampered' };
  }
}

/**
 * The deployment's sealing: seals under the current key, opens under it (or, during a
 * rotation, under the key being replaced). `what` names the value in errors, never its bytes.
 */
export class SecretBox {
  readonly keys: readonly SecretKey[];
  constructor(
    readonly current: SecretKey,
    previous: readonly SecretKey[] = [],
  ) {
    this.keys = [current, ...previous.filter((k) => k.id !== current.id)];
  }

  seal(plaintext: string, aad: string): string {
    return seal(this.current, plaintext, aad);
  }

  open(sealed: string, aad: string, what = 'a stored secret'): string {
    const r = openSealed(this.keys, sealed, aad);
    if (!r.ok) throw new SealedSecretError(r.reason, what);
    return r.plaintext;
  }
}
