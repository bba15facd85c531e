/**
 * Webhook signatures (`docs/webhooks.md`; `docs/spec/service-spec.md` part 6 "Signature").
 *
 * Header: `X-SVC-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, where each v1 is the lowercase
 * hex HMAC-SHA256 of `<t>.<raw body>` keyed by one endpoint secret. During a secret rotation the
 * old and the new secret both sign, so the header carries two v1 values and a receiver holding
 * either secret accepts it.
 *
 * This module is shared with the client libraries, so it imports nothing but node:crypto.
 */
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'X-SVC-Signature';
/** Signature age tolerance (`docs/spec/service-spec.md` part 8). */
export const DEFAULT_TOLERANCE_S = 300;
export const SECRET_PREFIX = 'whsec_';

/**
 * A real header is ~150 bytes (two v1 during a rotation); anything far larger is garbage, and
 * refusing it early keeps a hostile header from costing us more than a length check.
 */
const MAX_HEADER_LENGTH = 4096;
/** 64 hex chars = 32 bytes of SHA-256. */
const DIGEST_HEX_LENGTH = 64;

export type VerifyFailureReason =
  | 'missing_header'
  | 'missing_timestamp'
  | 'missing_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'malformed';

export type VerifyResult = { ok: true; t: number } | { ok: false; reason: VerifyFailureReason };

export interface VerifyOptions {
  /** Maximum |now − t| in seconds; default 300. */
  toleranceS?: number;
  /** Current time in unix seconds; default the system clock. */
  now?: number;
}

export class WebhookVerificationError extends Error {
  readonly reason: VerifyFailureReason;
  constructor(reason: VerifyFailureReason) {
    super(`webhook signature verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** Lowercase hex HMAC-SHA256 of `${t}.${body}` keyed by `secret` (the secret string as given, UTF-8). */
export function computeSignature(secret: string, body: string | Buffer, t: number): string {
  const mac = crypto.createHmac('sha256', secret);
  // Two updates rather than a concatenated string so a Buffer body is hashed byte for byte,
  // without a decode/encode round trip that would alter non-UTF-8 bytes.
  mac.update(`${t}.`, 'utf8');
  if (typeof body === 'string') mac.update(body, 'utf8');
  else mac.update(body);
  return mac.digest('hex');
}

/** The header value for a delivery: one v1 per secret, in the order given (new secret first by convention). */
export function signPayload(secrets: readonly string[], body: string | Buffer, t: number): string {
  if (secrets.length === 0) throw new RangeError('signPayload needs at least one secret');
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError(`signature timestamp must be whole unix seconds, got ${t}`);
  const parts = [`t=${t}`];
  for (const secret of secrets) parts.push(`v1=${computeSignature(secret, body, t)}`);
  return parts.join(',');
}

interface ParsedHeader {
  t: number | undefined;
  v1: string[];
}

/** Returns null when the header cannot be read as `key=value` pairs with a numeric t. */
function parseHeader(header: string): ParsedHeader | null {
  if (header.length > MAX_HEADER_LENGTH) return null;
  const parsed: ParsedHeader = { t: undefined, v1: [] };
  for (const rawPart of header.split(',')) {
    const part = rawPart.trim();
    // Tolerate a stray empty element (e.g. a trailing comma); it carries no claim.
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      // Two timestamps would let an attacker pick which one we check: refuse the header.
      if (parsed.t !== undefined) return null;
      // Digits only: Number() would also accept '', '0x1f', '1e3', ' 12 ', which are not unix seconds.
      if (!/^\d{1,12}$/.test(value)) return null;
      parsed.t = Number(value);
    } else if (key === 'v1') {
      parsed.v1.push(value);
    }
    // Other keys (a future v2, a v0 test scheme) are ignored so newer senders stay readable.
  }
  return parsed;
}

/**
 * Constant-time comparison of two hex digests. The lengths are compared first because
 * timingSafeEqual throws on unequal lengths; the expected length is public (64), so the early
 * return leaks nothing about the secret.
 */
function digestsEqual(expectedHex: string, candidate: string): boolean {
  if (candidate.length !== DIGEST_HEX_LENGTH) return false;
  // Compare the ASCII text, not Buffer.from(hex, 'hex'): the hex decoder silently stops at the
  // first bad character, which would make 'ab…zz' compare as a shorter prefix.
  const a = Buffer.from(expectedHex, 'utf8');
  const b = Buffer.from(candidate.toLowerCase(), 'utf8');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Verifies a signature header; never throws, whatever the header holds. */
export function verifySignature(
  header: string | undefined,
  body: string | Buffer,
  secret: string,
  opts: VerifyOptions = {},
): VerifyResult {
  const toleranceS = opts.toleranceS ?? DEFAULT_TOLERANCE_S;
  // Whole seconds on both sides: the sender's t is floored, so a floored "now" makes the
  // tolerance boundary exact (a header exactly 300 s old is accepted).
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (typeof header !== 'string' || header.trim() === '') return { ok: false, reason: 'missing_header' };
  const parsed = parseHeader(header);
  if (parsed === null) return { ok: false, reason: 'malformed' };
  if (parsed.t === undefined) return { ok: false, reason: 'missing_timestamp' };
  if (parsed.v1.length === 0) return { ok: false, reason: 'missing_signature' };
  // Past and future alike: a future t would otherwise let a captured request be replayed later.
  // Written as !(≤) so a NaN tolerance or clock refuses rather than accepts.
  if (!(Math.abs(now - parsed.t) <= toleranceS)) return { ok: false, reason: 'timestamp_out_of_tolerance' };
  const expected = computeSignature(secret, body, parsed.t);
  let matched = false;
  // Check every v1 without breaking early, so the time taken does not reveal which one matched.
  for (const candidate of parsed.v1) {
    if (digestsEqual(expected, candidate)) matched = true;
  }
  return matched ? { ok: true, t: parsed.t } : { ok: false, reason: 'signature_mismatch' };
}

/** Like verifySignature, but throws WebhookVerificationError; returns the signed timestamp. */
export function verifyOrThrow(
  header: string | undefined,
  body: string | Buffer,
  secret: string,
  opts: VerifyOptions = {},
): number {
  const result = verifySignature(header, body, secret, opts);
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  return result.t;
}

/** A new endpoint secret: `whsec_` + 32 random bytes as base64url (43 chars, no padding). */
export function generateSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64url');
}
