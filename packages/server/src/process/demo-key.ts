import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { keyPrefix } from '../config.js';
import { generateKey } from '../domain/keys.js';
import type { KeyRepo, NewKey } from '../store/accounts/keys.js';

/** The sandbox demo key's file in the data dir (docs/operations.md says why it is kept). */
export const DEMO_KEY_FILE = 'demo-key';

const DEMO: NewKey = { name: 'demo (npm start)', plan: 'pro', products: ['live', 'archive', 'report', 'source'] };

export type StartKey =
  | { kind: 'bootstrap' }
  | { kind: 'demo'; key: string; file: string; created: boolean }
  | { kind: 'none' };

export function demoKeyPath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, DEMO_KEY_FILE);
}

/** The demo key stored in the data dir, if there is one and it looks like a key of this environment. */
export function readDemoKey(config: Pick<Config, 'dataDir' | 'env'>): string | null {
  let text: string;
  try {
    text = fs.readFileSync(demoKeyPath(config), 'utf8').trim();
  } catch {
    return null;
  }
  return new RegExp(`^${keyPrefix(config.env)}[A-Za-z0-9]{16,64}$`).test(text) ? text : null;
}

/**
 * The key a starting node announces. SVC_BOOTSTRAP_KEY when set. Otherwise, in the sandbox only,
 * the demo key: created on the first start of a data dir and kept in `<data dir>/demo-key`
 * (mode 0600) so every later start prints the same key instead of minting another full-access
 * one. Keys are stored hashed, so the file is the only way to print it again; it holds a sandbox
 * key for a local demo and is never written in production, where no key is ever created
 * without an operator asking (`svc keys create`).
 */
export async function startKey(config: Config, keys: KeyRepo, now: Date): Promise<StartKey> {
  if (config.bootstrapKey) {
    await keys.ensureBootstrap(config.bootstrapKey, now);
    return { kind: 'bootstrap' };
  }
  if (config.env !== 'sandbox') return { kind: 'none' };
  const file = demoKeyPath(config);
  const stored = readDemoKey(config);
  if (stored) {
    const record = await keys.ensureKey(stored, DEMO, now);
    // An operator revoked it: that stands, and the demo gets a new key.
    if (!record.revoked_at) return { kind: 'demo', key: stored, file, created: false };
  }
  const key = generateKey(keyPrefix(config.env));
  await keys.create(DEMO, now, key);
  fs.mkdirSync(config.dataDir, { recursive: true });
  // Written beside and renamed over: a reader never sees half a key, and the mode is set before the key is in it.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return { kind: 'demo', key, file, created: true };
}
