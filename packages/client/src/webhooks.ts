/**
 * Webhook signatures: `X-SVC-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each v1 the
 * lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed by one endpoint secret (two during a
 * secret rotation). WebCrypto only, so the same code runs on Node ≥ 20 and in browsers; that
 * makes these functions async.
 */
import { SchemaMismatchError, WebhookVerificationError, type WebhookVerificationFailure } from './errors.js';
import { EVENT_SCHEMA, type WebhookPayload } from './schema.js';

export const SIGNATURE_HEADER = 'X-SVC-Signature';
export const DEFAULT_TOLERANCE_S = 300;
/** A real header is ~150 bytes; refusing a huge one costs a length check, not 1,000 HMACs. */
const MAX_HEADER_LENGTH = 4096;
const DIGEST_HEX = /^[0-9a-fA-F]{64}$/;

export interface VerifyWebhookOptions {
  /** Largest accepted |now − t| in seconds; default 300. */
  toleranceS?: number | undefined;
  /** The current time in unix seconds; default the system clock (for tests). */
  now?: number | undefined;
}

/**
 * Request headers as server frameworks hand them over: `node:http`'s `req.headers` (and
 * Express's, Fastify's), names in any case, a repeated header as an array.
 */
export type HeaderRecord = { readonly [name: string]: string | readonly string[] | undefined };

/**
 * Where the signature is: the `X-SVC-Signature` value itself, its values when the header came
 * more than once, a fetch `Headers` (a `Request`'s, in a fetch-style handler) or all the request
 * headers as a plain object.
 */
export type SignatureSource = string | readonly string[] | Headers | HeaderRecord | null | undefined;

const isList = (source: SignatureSource): source is readonly string[] => Array.isArray(source);

/** A `Headers` of this runtime or of another fetch implementation: anything with a `get`. */
function isHeaders(source: object): source is Pick<Headers, 'get'> {
  return 'get' in source && typeof source.get === 'function';
}

/** The signature header's value, its repeats joined as one list (as HTTP allows). */
export function signatureHeaderOf(source: SignatureSource): string | undefined {
  if (source === null || source === undefined) return undefined;
  if (typeof source === 'string') return source;
  if (isList(source)) return source.length === 0 ? undefined : source.join(',');
  if (isHeaders(source)) return source.get(SIGNATURE_HEADER) ?? undefined;
  const wanted = SIGNATURE_HEADER.toLowerCase();
  for (const [name, value] of Object.entries(source)) {
    if (name.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : signatureHeaderOf(value);
  }
  return undefined;
}

const encoder = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!s) throw new Error('svc: WebCrypto (crypto.subtle) is not available in this runtime');
  return s;
}

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body;
}

/** `<t>.` followed by the body's bytes, exactly as signed (a byte body is never decoded). */
function signedContent(t: number, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${t}.`);
  const raw = bytesOf(body);
  const out = new Uint8Array(prefix.length + raw.length);
  out.set(prefix, 0);
  out.set(raw, prefix.length);
  return out;
}

function hmacKey(secret: string, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  return subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bytesToHex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

type Parsed = { t: number | undefined; v1: string[] } | null;

function parseHeader(header: string): Parsed {
  if (header.length > MAX_HEADER_LENGTH) return null;
  const parsed: { t: number | undefined; v1: string[] } = { t: undefined, v1: [] };
  for (const raw of header.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      // Two timestamps would let an attacker choose which one is checked.
      if (parsed.t !== undefined || !/^\d{1,12}$/.test(value)) return null;
      parsed.t = Number(value);
    } else if (key === 'v1') parsed.v1.push(value);
    // Other schemes (a future v2) are ignored so newer senders stay readable.
  }
  return parsed;
}

/** Why a header fails, or null when one of its v1 signatures is the body's under `secret`. */
export async function webhookSignatureFailure(
  rawBody: string | Uint8Array,
  signature: SignatureSource,
  secret: string,
  opts: VerifyWebhookOptions = {},
): Promise<WebhookVerificationFailure | null> {
  const toleranceS = opts.toleranceS ?? DEFAULT_TOLERANCE_S;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const signatureHeader = signatureHeaderOf(signature);
  if (signatureHeader === undefined || signatureHeader.trim() === '') return 'missing_header';
  const parsed = parseHeader(signatureHeader);
  if (parsed === null) return 'malformed';
  if (parsed.t === undefined) return 'missing_timestamp';
  if (parsed.v1.length === 0) return 'missing_signature';
  // Written as !(≤) so that a NaN tolerance or clock refuses; future timestamps count too.
  if (!(Math.abs(now - parsed.t) <= toleranceS)) return 'timestamp_out_of_tolerance';
  const key = await hmacKey(secret, 'verify');
  const content = signedContent(parsed.t, rawBody);
  let matched = false;
  // crypto.subtle.verify compares in constant time; every candidate is checked, so the time
  // taken does not tell which one matched.
  for (const candidate of parsed.v1) {
    if (!DIGEST_HEX.test(candidate)) continue;
    if (await subtle().verify('HMAC', key, hexToBytes(candidate), content)) matched = true;
  }
  return matched ? null : 'signature_mismatch';
}

/**
 * Checks a webhook request and returns its event: `rawBody` is the body exactly as received
 * (string or bytes, before any JSON parsing); `signature` is the `X-SVC-Signature` value, or
 * the request's headers (`req.headers` of `node:http`, or a fetch `Headers`) to read it from.
 * Throws `WebhookVerificationError` (with a `reason`) when the signature does not hold, and
 * `SchemaMismatchError` for an event of a schema this client does not read.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  signature: SignatureSource,
  secret: string,
  opts: VerifyWebhookOptions = {},
): Promise<WebhookPayload> {
  const failure = await webhookSignatureFailure(rawBody, signature, secret, opts);
  if (failure !== null) throw new WebhookVerificationError(failure);
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const payload: unknown = JSON.parse(text);
  if (!isPayload(payload)) {
    const schema = typeof payload === 'object' && payload !== null && 'schema' in payload ? payload.schema : undefined;
    throw new SchemaMismatchError(EVENT_SCHEMA, schema);
  }
  return payload;
}

/** Signed by the server, so a body whose schema is svc.event.v1 is one of its webhook payloads. */
function isPayload(p: unknown): p is WebhookPayload {
  return typeof p === 'object' && p !== null && 'schema' in p && p.schema === EVENT_SCHEMA && 'id' in p && typeof p.id === 'string';
}

export interface TestHeaderOptions {
  /** The body to sign, exactly as it will be sent. */
  payload: string | Uint8Array;
  /** One secret, or several to imitate a rotation (one v1 each, in this order). */
  secret: string | readonly string[];
  /** Unix seconds; default now. */
  timestamp?: number | undefined;
}

/**
 * An `X-SVC-Signature` value for your own tests, made as the server makes it (as Stripe's
 * `generateTestHeaderString`).
 */
export async function generateTestHeaderString(opts: TestHeaderOptions): Promise<string> {
  const t = opts.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError(`timestamp must be whole unix seconds, got ${t}`);
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  if (secrets.length === 0) throw new RangeError('generateTestHeaderString needs a secret');
  const content = signedContent(t, opts.payload);
  const parts = [`t=${t}`];
  for (const secret of secrets) {
    const key = await hmacKey(secret, 'sign');
    parts.push(`v1=${bytesToHex(await subtle().sign('HMAC', key, content))}`);
  }
  return parts.join(',');
}
