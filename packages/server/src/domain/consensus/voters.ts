/**
 * Who votes (README.md rule 12, docs/consensus.md "Threat model"): a key reporting in its own voice,
 * or an end user a key names in `reporter`. The voter id joins the two; key ids never hold the
 * separator, so the pair maps to one id and back given the key.
 */
const SEPARATOR = '/';

export const voterId = (keyId: string, reporter?: string | null): string => (reporter == null ? keyId : `${keyId}${SEPARATOR}${reporter}`);

/** The reporter named in a voter id under `keyId` (null: the key's own voice). */
export const reporterOf = (voter: string, keyId: string): string | null => (voter === keyId ? null : voter.slice(keyId.length + SEPARATOR.length));
