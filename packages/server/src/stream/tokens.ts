import { STREAM_TOKEN, type StreamToken } from '@svc/schema';
import { SvcError } from '../domain/errors.js';
import { SEALED_PREFIX, type SecretBox } from '../domain/secrets/sealed.js';
import type { Principal } from '../domain/scopes.js';

/** Binds a sealed value to being a stream token: no other sealed value of the deployment opens as one. */
const AAD = 'svc stream token v1';
const TOKEN_PREFIX = 'sst_';

/**
 * Limits a token puts on each client address that presents it, on top of its key's: for tokens
 * handed to anyone who asks (the sandbox demo's), so one client cannot hold all of the key's
 * connections or spend all of its requests (docs/stream.md "A scoreboard in a public page").
 */
export interface PerAddress {
  /** Streams one address may hold open with tokens of this key that carry the limit. */
  connections: number;
  /** Stream opens per minute from one address. */
  requestsPerMinute: number;
}

/** What a token carries, sealed: its key, its expiry and what it narrows the key to (null: not narrowed). */
interface Claims {
  k: string;
  /** Expiry, ms since the epoch. */
  x: number;
  s: string[] | null;
  l: string[] | null;
  g: string[] | null;
  /** Per-address limits as [connections, requests per minute]; absent: none. */
  a?: [number, number];
}

/** A token's view of the stream: the key's principal narrowed, the games it is limited to, when it ends. */
export interface TokenGrant {
  principal: Principal;
  games: readonly string[] | null;
  expiresAt: number;
  perAddress: PerAddress | null;
}

const perAddressOf = (v: unknown): [number, number] | null | undefined =>
  v === undefined ? null : Array.isArray(v) && v.length === 2 && v.every((n): n is number => Number.isSafeInteger(n) && n > 0) ? [v[0], v[1]] : undefined;

const names = (v: unknown): string[] | null | undefined =>
  v === null ? null : Array.isArray(v) && v.every((x): x is string => typeof x === 'string') ? v : undefined;

/** The narrower of two allow-lists (null: unrestricted): a token never widens its key. */
export function narrow(key: readonly string[] | null, token: readonly string[] | null): readonly string[] | null {
  if (token === null) return key;
  if (key === null) return token;
  return token.filter((x) => key.includes(x));
}

export function isStreamToken(raw: string): boolean {
  return raw.startsWith(TOKEN_PREFIX);
}

/**
 * Stream tokens (docs/stream.md "Stream tokens"): short-lived, narrowed credentials a back end
 * mints for a public page, so the page never holds an API key. A token is stateless: its claims
 * are sealed (AES-256-GCM) under the deployment's secret key, so every node opens what any node
 * minted, nothing is stored, and a client can neither read nor alter them. What it cannot carry,
 * whether its key was revoked since, is read from the store when a stream opens and every few
 * seconds while it is open (gateway.ts checkKeys). Rotating SVC_SECRET_KEY ends outstanding
 * tokens once the old key is dropped.
 */
export class StreamTokens {
  constructor(
    private readonly box: SecretBox,
    /** The key's principal, or undefined when it is gone or revoked. */
    private readonly keyById: (id: string) => Promise<Principal | undefined>,
  ) {}

  mint(principal: Principal, opts: { ttlS: number; sports: string[] | null; leagues: string[] | null; games: string[] | null; perAddress?: PerAddress }, now: number): StreamToken {
    const claims: Claims = { k: principal.keyId, x: now + opts.ttlS * 1000, s: opts.sports, l: opts.leagues, g: opts.games };
    if (opts.perAddress) claims.a = [opts.perAddress.connections, opts.perAddress.requestsPerMinute];
    const sealed = this.box.seal(JSON.stringify(claims), AAD);
    return {
      token: TOKEN_PREFIX + sealed.slice(SEALED_PREFIX.length),
      expires_at: new Date(claims.x).toISOString(),
      sports: opts.sports,
      leagues: opts.leagues,
      games: opts.games,
    };
  }

  /** The grant of a token presented to the stream; throws the 401 the stream answers with. */
  async authenticate(raw: string, now: number): Promise<TokenGrant> {
    const claims = this.open(raw);
    if (!claims) throw new SvcError('invalid_api_key', 'The stream token is not valid.');
    if (claims.x <= now) throw new SvcError('token_expired', `The stream token expired at ${new Date(claims.x).toISOString()}; mint another with POST /v1/stream/tokens.`);
    const key = await this.keyById(claims.k);
    if (!key) throw new SvcError('invalid_api_key', 'The API key that minted this stream token has been revoked.');
    return {
      principal: { ...key, sports: narrow(key.sports, claims.s), leagues: narrow(key.leagues, claims.l) },
      games: claims.g,
      expiresAt: claims.x,
      perAddress: claims.a ? { connections: claims.a[0], requestsPerMinute: claims.a[1] } : null,
    };
  }

  private open(raw: string): Claims | null {
    if (!STREAM_TOKEN.test(raw)) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.box.open(SEALED_PREFIX + raw.slice(TOKEN_PREFIX.length), AAD, 'a stream token'));
    } catch {
      return null;
    }
    if (typeof parsed !== 'object' || parsed === null) return null;
    const r: Record<string, unknown> = { ...parsed };
    const [s, l, g, a] = [names(r.s), names(r.l), names(r.g), perAddressOf(r.a)];
    if (typeof r.k !== 'string' || typeof r.x !== 'number' || s === undefined || l === undefined || g === undefined || a === undefined) return null;
    return { k: r.k, x: r.x, s, l, g, ...(a ? { a } : {}) };
  }
}
