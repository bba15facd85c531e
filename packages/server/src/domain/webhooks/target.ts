/**
 * SSRF protection for webhook targets (SVC_WEBHOOK_ALLOW_PRIVATE, default off; `docs/webhooks.md`).
 *
 * Two checks, because one is not enough:
 * - validateWebhookUrl at registration: scheme, credentials, and IP-literal hosts.
 * - at every delivery the name is resolved again and judgeResolved refuses the target if ANY
 *   address is internal, handing back the address to connect to. The caller must connect to that
 *   address rather than resolve again, or a DNS-rebinding name could answer public to us and
 *   private to the HTTP client a millisecond later (`webhooks/target-resolver.ts` does both).
 *
 * Pure: no DNS, no sockets. Addresses are classified by ipaddr.js.
 */
import ipaddr from 'ipaddr.js';

/** Why a target was refused; `reason` beside it is the sentence shown to the API caller. */
export type TargetFailureReason =
  | 'missing_url'
  | 'url_too_long'
  | 'invalid_characters'
  | 'not_absolute_url'
  | 'scheme_not_allowed'
  | 'https_required'
  | 'credentials_in_url'
  | 'missing_host'
  | 'invalid_port'
  | 'forbidden_address'
  | 'loopback_name'
  | 'dns_failed'
  | 'dns_empty'
  | 'dns_not_an_address'
  | 'resolves_to_forbidden';

type Refusal = { ok: false; code: TargetFailureReason; reason: string };
export type UrlCheck = { ok: true; url: URL } | Refusal;
export type TargetCheck = { ok: true; address: string; family: number } | Refusal;

const refuse = (code: TargetFailureReason, reason: string): Refusal => ({ ok: false, code, reason });

/** Long URLs are not needed by any receiver and only make logs and rows bigger. */
const MAX_URL_LENGTH = 2048;

/**
 * An IPv4 address is a target only when ipaddr.js classifies it as plain `unicast`: every special
 * range it knows (private, loopback, link-local with cloud metadata, carrier-grade NAT, reserved,
 * documentation, benchmarking, multicast, broadcast, AS112, AMT…) is refused. The classification
 * is the library's, not a list of ours: a hand-written list is how a range gets missed.
 */
function isForbiddenV4(ip: ipaddr.IPv4): boolean {
  return ip.range() !== 'unicast';
}

/**
 * The IPv4 address an IPv6 address delivers to, for the forms whose traffic really reaches an
 * IPv4 host: IPv4-mapped (::ffff:a.b.c.d, a dual-stack socket talks IPv4), IPv4-translated
 * (::ffff:0:a.b.c.d, SIIT), well-known-prefix NAT64 (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::/48,
 * the relay forwards to AABB:CCDD). Those are judged by the address they wrap, so a public
 * address behind one stays reachable and a private one stays refused.
 */
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const g = ip.parts;
  const low32 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return low32(g[6], g[7]);
    case 'rfc6052':
      // 64:ff9b:1::/48 (local-use NAT64) shares the range name; only the /96 embeds at the end.
      return g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0 ? low32(g[6], g[7]) : null;
    case '6to4':
      return low32(g[1], g[2]);
    default:
      return null;
  }
}

/**
 * IPv6: plain `unicast` is a target; a translation form is judged by the IPv4 address it wraps;
 * every other special range is refused. That includes Teredo (an obfuscated IPv4 server and
 * client inside, refused rather than unwrapped), local-use NAT64, and the deprecated
 * IPv4-compatible ::a.b.c.d, which ipaddr.js files under `unicast` but nothing public uses.
 */
function isForbiddenV6(ip: ipaddr.IPv6): boolean {
  const range = ip.range();
  if (range === 'unicast') return ip.parts.slice(0, 6).every((g) => g === 0);
  const v4 = embeddedV4(ip);
  return v4 === null || isForbiddenV4(v4);
}

/**
 * The address in pure hex groups, as the URL serialiser writes it. ipaddr.js 2.5 reads a dotted
 * tail as IPv4-mapped whatever precedes it (::8.8.8.8 comes out as ::ffff:808:808), so it is
 * never handed one.
 */
const hexOnlyV6 = (ip: string): string => new URL(`http://[${ip}]/`).hostname.slice(1, -1);

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * 4 or 6 for an IP address written as resolvers and the URL parser write them, else 0. Strict
 * on purpose: ipaddr.js alone would also read 127.1 or 0x7f.0.0.1, which no resolver returns and
 * the URL parser has already normalised, and a scoped address (fe80::1%eth0) is no target.
 */
export function ipFamily(s: string): 0 | 4 | 6 {
  if (DOTTED_QUAD.test(s)) return 4;
  if (s.includes(':') && !s.includes('%') && ipaddr.IPv6.isValid(s)) return 6;
  return 0;
}

/**
 * True when a webhook must not be sent to `ip`. Anything that is not a plain IP address
 * (a name, a scoped address like fe80::1%eth0, garbage) is forbidden too: fail closed.
 */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // A zone id only makes sense for link-local destinations, which are refused anyway.
  if (bare.includes('%')) return true;
  const family = ipFamily(bare);
  if (family === 4) return isForbiddenV4(ipaddr.IPv4.parse(bare));
  if (family === 6) return isForbiddenV6(ipaddr.IPv6.parse(hexOnlyV6(bare)));
  return true;
}

/** The URL's host without IPv6 brackets. */
export const bareHost = (url: URL): string =>
  url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname;

/** "localhost", "foo.localhost" and their trailing-dot forms always resolve to loopback (RFC 6761). */
const isLocalhostName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/**
 * Registration-time check. WHATWG URL parsing already normalises odd IPv4 spellings
 * (http://2130706433/, http://0x7f.1/ → 127.0.0.1), so the IP-literal check sees the real address.
 */
export function validateWebhookUrl(raw: string, opts: { allowPrivate: boolean }): UrlCheck {
  if (typeof raw !== 'string' || raw.trim() === '') return refuse('missing_url', 'url is required');
  if (raw.length > MAX_URL_LENGTH) return refuse('url_too_long', `url is longer than ${MAX_URL_LENGTH} characters`);
  // The URL parser drops tabs and newlines and trims spaces without a word; the receiver would
  // then be a different URL from the one the caller typed.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return refuse('invalid_characters', 'url must not contain spaces or control characters');
  let url: URL;
  try {
    // No base: a relative URL throws here, which is what we want.
    url = new URL(raw);
  } catch {
    // Also a port above 65535: the URL parser refuses it.
    return refuse('not_absolute_url', 'url must be an absolute http(s) URL with a port between 1 and 65535');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return refuse('scheme_not_allowed', `url scheme ${url.protocol.replace(/:$/, '')} is not allowed; use https`);
  }
  if (url.protocol === 'http:' && !opts.allowPrivate) return refuse('https_required', 'url must use https');
  // Credentials in a URL end up in logs and delivery records; receivers authenticate us by signature.
  if (url.username !== '' || url.password !== '') return refuse('credentials_in_url', 'url must not contain credentials');
  const host = bareHost(url);
  if (host === '') return refuse('missing_host', 'url has no host');
  // Any port 1–65535 is allowed (receivers behind a non-standard HTTPS port are common); port 0
  // is no port at all, and the parser has refused the rest. See README "Webhooks".
  if (url.port === '0') return refuse('invalid_port', 'url port must be between 1 and 65535');
  if (!opts.allowPrivate) {
    if (ipFamily(host) !== 0 && isForbiddenAddress(host)) {
      return refuse('forbidden_address', `url host ${host} is a private, loopback or reserved address`);
    }
    if (isLocalhostName(host)) return refuse('loopback_name', `url host ${host} is a loopback name`);
  }
  return { ok: true, url };
}

/**
 * Delivery-time judgement of what the URL's host resolved to: refused when ANY address is
 * forbidden — a name with one public and one private address could otherwise be steered to the
 * private one. Returns the address the caller must connect to.
 */
export function judgeResolved(host: string, addresses: readonly { address: string }[], opts: { allowPrivate: boolean }): TargetCheck {
  if (addresses.length === 0) return refuse('dns_empty', `dns lookup of ${host} returned no address`);
  for (const { address } of addresses) {
    // Guards against a misbehaving resolver returning a non-address, even with allowPrivate.
    if (ipFamily(address) === 0) return refuse('dns_not_an_address', `dns lookup of ${host} returned a non-address`);
    if (!opts.allowPrivate && isForbiddenAddress(address)) {
      return refuse('resolves_to_forbidden', `${host} resolves to ${address}, a private, loopback or reserved address`);
    }
  }
  const first = addresses[0].address;
  return { ok: true, address: first, family: ipFamily(first) };
}

/** A refusal for a lookup that failed (the resolver's error code in the reason). */
export const lookupFailed = (host: string, code: string): TargetCheck => refuse('dns_failed', `dns lookup of ${host} failed: ${code}`);
