import { promises as dnsPromises } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { bareHost, ipFamily, judgeResolved, lookupFailed, validateWebhookUrl, type TargetCheck } from '../domain/webhooks/target.js';

/** Resolves a host name to all its addresses; tests inject their own. */
export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

const defaultLookup: Lookup = async (host) => dnsPromises.lookup(host, { all: true });

/**
 * Delivery-time check (`docs/webhooks.md`, "Targets"): re-validates the URL (config may have
 * changed since registration), resolves the host now and judges every address it resolves to.
 * Returns the address the caller must connect to (see pinnedLookup).
 */
export async function resolveSafeTarget(url: URL, opts: { allowPrivate: boolean; lookup?: Lookup }): Promise<TargetCheck> {
  const valid = validateWebhookUrl(url.href, { allowPrivate: opts.allowPrivate });
  if (!valid.ok) return valid;
  return resolveCheckedTarget(url, opts);
}

/** The resolution half of resolveSafeTarget, for a URL that validateWebhookUrl accepted under the same options. */
export async function resolveCheckedTarget(url: URL, opts: { allowPrivate: boolean; lookup?: Lookup }): Promise<TargetCheck> {
  const host = bareHost(url);
  const literal = ipFamily(host);
  if (literal !== 0) return { ok: true, address: host, family: literal };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await (opts.lookup ?? defaultLookup)(host);
  } catch (err) {
    return lookupFailed(host, err instanceof Error && 'code' in err ? String(err.code) : String(err));
  }
  return judgeResolved(host, addresses, opts);
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
