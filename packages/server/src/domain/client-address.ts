/**
 * What one client is, for the limits kept per client address (the sandbox demo's endpoints and
 * its streams: docs/stream.md "A scoreboard in a public page"): an IPv4 address itself, also when
 * written IPv4-mapped (`::ffff:203.0.113.7`), and an IPv6 address by its /64, the block one host
 * or one home network is given, so a client cannot step around its limit by changing the low
 * bits of its address. Unknown or unparsable: one bucket of its own.
 */
export function addressBucket(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(address)) return address;
  const groups = ipv6Groups(address);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : 'unknown';
}

/** The eight 16-bit groups of an IPv6 address (zone and embedded IPv4 tail aside), or null. */
function ipv6Groups(address: string): string[] | null {
  const bare = address.split('%')[0].toLowerCase();
  if (!/^[0-9a-f:.]+$/.test(bare)) return null;
  const halves = bare.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  // An embedded IPv4 tail counts as two groups; only the first four groups matter here.
  const width = (list: string[]) => list.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const missing = 8 - width(head) - width(tail);
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => '0'), ...tail];
  if (all.some((g) => !g.includes('.') && !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => (g.includes('.') ? g : String(parseInt(g, 16).toString(16))));
}
