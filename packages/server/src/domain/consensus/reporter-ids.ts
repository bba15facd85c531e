/**
 * A reporter's public id (`rep_…`, docs/reporters.md): its voter id (the key id, and the reporter
 * the key named after a `/`) in base64url. Reversible, so suspending needs no table of ids and an
 * id never changes; the list is for operators (product `admin`), who see the key and the reporter
 * anyway. UTF-8 keeps the common (ASCII) names short; a name of 128 characters beyond ASCII is
 * written as UTF-16 after a `~` instead, so that no id passes 405 characters (a path segment may
 * hold 512: http/errors.ts).
 */
const PREFIX = 'rep_';
const WIDE = '~';
/** Above this, the UTF-8 form of a name is longer than its UTF-16 form can be. */
const NARROW_MAX = 400;
/** Key ids are `key_` and base62; a voter id is one, then `/` and the reporter's name (1..128 UTF-16 units). */
const VOTER = /^key_[A-Za-z0-9]{1,64}(\/[^]{1,128})?$/;

const b64 = (bytes: Buffer): string => bytes.toString('base64url');

export function reporterIdOf(voter: string): string {
  const narrow = b64(Buffer.from(voter, 'utf8'));
  return narrow.length <= NARROW_MAX ? `${PREFIX}${narrow}` : `${PREFIX}${WIDE}${b64(Buffer.from(voter, 'utf16le'))}`;
}

/** The voter a `rep_…` id names; undefined when the string is not an id this service mints. */
export function voterOfReporterId(id: string): string | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  const wide = id.startsWith(WIDE, PREFIX.length);
  const body = id.slice(PREFIX.length + (wide ? WIDE.length : 0));
  if (!/^[A-Za-z0-9_-]{1,800}$/.test(body)) return undefined;
  const voter = Buffer.from(body, 'base64url').toString(wide ? 'utf16le' : 'utf8');
  // Another spelling of the same bytes (padding bits, a stray character) is not our id.
  return VOTER.test(voter) && reporterIdOf(voter) === id ? voter : undefined;
}

/** The key a voter reports through, and the reporter it names (null: the key's own voice). */
export function splitVoter(voter: string): { keyId: string; reporter: string | null } {
  const at = voter.indexOf('/');
  return at < 0 ? { keyId: voter, reporter: null } : { keyId: voter.slice(0, at), reporter: voter.slice(at + 1) };
}
