import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { generateSecretKey, parseSecretKey } from '../domain/secrets/sealed.js';
import { keyFilePath, openStore, replaceKeyFile } from '../secrets/key.js';
import { rotateSecretKey } from '../secrets/rotate.js';

export const SECRETS_USAGE = `usage: svc secrets <command>
  rotate-key --new-key <64 hex>   re-encrypt every webhook secret (and recorded answer) under a new
                                  SVC_SECRET_KEY, in one transaction; the current key is SVC_SECRET_KEY
                                  (or the sandbox's key file). Stop the service first; start it with the
                                  new key afterwards. --new-key may be omitted if SVC_NEW_SECRET_KEY is set.
  generate-key                    print a new random key (64 hex characters)`;

export class SecretsUsageError extends Error {}

/** `svc secrets rotate-key|generate-key`. Returns the text to print (docs/operations.md "Secrets at rest"). */
export async function secretsCommand(argv: string[], config: Config, env: Record<string, string | undefined>): Promise<string> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') return SECRETS_USAGE;
  let values: { 'new-key'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: rest, options: { 'new-key': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch {
    // parseArgs' own message quotes the offending argument, which may be a key: name the options instead.
    throw new SecretsUsageError('unexpected argument; rotate-key takes --new-key <64 hex> (or SVC_NEW_SECRET_KEY), generate-key takes none');
  }
  if (values.help) return SECRETS_USAGE;
  if (sub === 'generate-key') return generateSecretKey().toHex();
  if (sub !== 'rotate-key') throw new SecretsUsageError(`unknown command '${sub}' (rotate-key, generate-key; --help)`);
  const raw = values['new-key'] ?? env.SVC_NEW_SECRET_KEY;
  const parsed = parseSecretKey(raw);
  // The key is never echoed, not even a bad one.
  if (!parsed.ok) throw new SecretsUsageError(parsed.reason === 'missing' ? '--new-key <64 hex characters> is required (svc secrets generate-key makes one)' : '--new-key must be 32 bytes written as 64 hex characters');
  const { db, box, keySource, config: resolved } = await openStore(config);
  try {
    if (parsed.key.id === box.current.id) throw new SecretsUsageError('--new-key is the key in use already');
    const r = await rotateSecretKey(db, box, parsed.key);
    const where =
      keySource === 'env'
        ? 'Set SVC_SECRET_KEY to the new key before the next start.'
        : (replaceKeyFile(resolved.dataDir, parsed.key), `${keyFilePath(resolved.dataDir)} now holds the new key.`);
    return `Re-encrypted ${r.secrets} webhook secret(s) and ${r.answers} recorded answer(s) under key id ${r.toKeyId} (was ${r.fromKeyId}). ${where}`;
  } finally {
    await db.close();
  }
}
