/**
 * SSRF protection for webhook targets (DESIGN §4: SVC_WEBHOOK_ALLOW_PRIVATE, default off).
 *
 * Two checks, because one is not enough:
 * - validateWebhookUrl at registration: scheme, credentials, and IP-literal hosts.
 * - resolveSafeTarget at every delivery: resolve the name, refuse if ANY address is internal, and
 *   hand back the address to connect to. The caller must connect to that address (pinnedLookup)
 *   rather than resolve again, or a DNS-rebinding name could answer public to us and private to
 *   the HTTP client a millisecond later.
 */
import { promises as dnsPromises } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, isIPv4, isIPv6 } from 'node:net';

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };
export type TargetCheck = { ok: true; address: string; family: number } | { ok: false; reason: string };
export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

/** Long URLs are not needed by any receiver and only make logs and rows bigger. */
const MAX_URL_LENGTH = 2048;

/** [network, prefix length] pairs; the network as a 32-bit unsigned number. */
const FORBIDDEN_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on many stacks
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT, shared address space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, including cloud metadata at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including broadcast 255.255.255.255
];

function parseIPv4(ip: string): number | null {
  if (!isIPv4(ip)) return null;
  // isIPv4 guarantees four decimal octets 0–255 without leading zeros.
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

const V4_RANGES = FORBIDDEN_V4.map(([net, bits]) => {
  const base = parseIPv4(net);
  if (base === null) throw new Error(`bad range ${net}`);
  return { base, size: 2 ** (32 - bits) };
});

function isForbiddenV4(n: number): boolean {
  // Arithmetic instead of bit operations: JavaScript's bitwise operators are signed 32-bit.
  return V4_RANGES.some(({ base, size }) => n >= base && n < base + size);
}

/** Eight 16-bit groups, or null. Accepts the embedded dotted-quad form (::ffff:1.2.3.4). */
function parseIPv6(ip: string): number[] | null {
  if (!isIPv6(ip)) return null;
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Rewrite a trailing dotted quad as the two hex groups it stands for, then parse uniformly.
    const v4 = parseIPv4(tail);
    if (v4 === null) return null;
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const toGroups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  const zeros = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if (zeros < 0) return null;
  const groups = [...head, ...new Array<number>(zeros).fill(0), ...rest];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

const embeddedV4 = (g: number[]): number => g[6] * 65536 + g[7];

function isForbiddenV6(g: number[]): boolean {
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  // ::/96 covers :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible ::a.b.c.d,
  // which nothing public uses.
  if (zeroUpTo(6)) return true;
  // ::ffff:a.b.c.d — IPv4-mapped: the socket really talks to the embedded IPv4 address.
  if (zeroUpTo(5) && g[5] === 0xffff) return isForbiddenV4(embeddedV4(g));
  // 64:ff9b::/96 — well-known NAT64 prefix: the gateway forwards to the embedded IPv4 address.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isForbiddenV4(embeddedV4(g));
  // 64:ff9b:1::/48 — local-use NAT64 (RFC 8215): only meaningful inside one network.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0x0001) return true;
  // 100::/64 — discard-only.
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return true;
  // 2001::/32 — Teredo: an obfuscated IPv4 server/client inside; refused rather than unwrapped.
  if (g[0] === 0x2001 && g[1] === 0) return true;
  // 2001:db8::/32 — documentation.
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true;
  // 2002::/16 — 6to4: the relay delivers to the IPv4 address in groups 1–2.
  if (g[0] === 0x2002) return isForbiddenV4(g[1] * 65536 + g[2]);
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 (deprecated site-local), ff00::/8 multicast.
  if ((g[0] & 0xfe00) === 0xfc00) return true;
  if ((g[0] & 0xffc0) === 0xfe80) return true;
  if ((g[0] & 0xffc0) === 0xfec0) return true;
  if ((g[0] & 0xff00) === 0xff00) return true;
  return false;
}

/**
 * True when a webhook must not be sent to `ip`. Anything that is not a plain IP address
 * (a name, a scoped address like fe80::1%eth0, garbage) is forbidden too: fail closed.
 */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // A zone id only makes sense for link-local destinations, which are refused anyway.
  if (bare.includes('%')) return true;
  const v4 = parseIPv4(bare);
  if (v4 !== null) return isForbiddenV4(v4);
  const v6 = parseIPv6(bare);
  if (v6 !== null) return isForbiddenV6(v6);
  return true;
}

/** The URL's host without IPv6 brackets. */
const bareHost = (url: URL): string =>
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
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, reason: 'url is required' };
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `url is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    // No base: a relative URL throws here, which is what we want.
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url must be an absolute http(s) URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: `url scheme ${url.protocol.replace(/:$/, '')} is not allowed; use https` };
  }
  if (url.protocol === 'http:' && !opts.allowPrivate) return { ok: false, reason: 'url must use https' };
  // Credentials in a URL end up in logs and delivery records; receivers authenticate us by signature.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not contain credentials' };
  const host = bareHost(url);
  if (host === '') return { ok: false, reason: 'url has no host' };
  if (!opts.allowPrivate) {
    if (isIP(host) !== 0 && isForbiddenAddress(host)) {
      return { ok: false, reason: `url host ${host} is a private, loopback or reserved address` };
    }
    if (isLocalhostName(host)) return { ok: false, reason: `url host ${host} is a loopback name` };
  }
  return { ok: true, url };
}

const defaultLookup: Lookup = async (host) => dnsPromises.lookup(host, { all: true });

/**
 * Delivery-time check: re-validates the URL (config may have changed since registration),
 * resolves the host now, and refuses when ANY address is forbidden — a name with one public
 * and one private address could otherwise be steered to the private one. Returns the address
 * the caller must connect to.
 */
export async function resolveSafeTarget(
  url: URL,
  opts: { allowPrivate: boolean; lookup?: Lookup },
): Promise<TargetCheck> {
  const valid = validateWebhookUrl(url.href, { allowPrivate: opts.allowPrivate });
  if (!valid.ok) return valid;
  const host = bareHost(url);
  const literal = isIP(host);
  if (literal !== 0) return { ok: true, address: host, family: literal };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await (opts.lookup ?? defaultLookup)(host);
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : String(err);
    return { ok: false, reason: `dns lookup of ${host} failed: ${code}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `dns lookup of ${host} returned no address` };
  for (const { address } of addresses) {
    // isIP guards against a misbehaving resolver returning a non-address, even with allowPrivate.
    if (isIP(address) === 0) return { ok: false, reason: `dns lookup of ${host} returned a non-address` };
    if (!opts.allowPrivate && isForbiddenAddress(address)) {
      return { ok: false, reason: `${host} resolves to ${address}, a private, loopback or reserved address` };
    }
  }
  const first = addresses[0];
  return { ok: true, address: first.address, family: isIP(first.address) };
}

/**
 * A `lookup` for net/tls/undici `connect` options that always answers with the address
 * resolveSafeTarget returned, so the connection goes exactly where we checked. The URL's
 * hostname is still used for TLS SNI and certificate checks and for the Host header.
 * Node calls lookup with `all: true` when happy-eyeballs is on, so both shapes are answered.
 */
export function pinnedLookup(
  address: string,
  family: number,
): (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void {
  return (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}
