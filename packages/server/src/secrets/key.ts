import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../config.js';
import { generateSecretKey, openSealed, parseSecretKey, SecretBox, sealedKeyId, type SecretKey } from '../domain/secrets/sealed.js';
import { openDb, type Db, type DbOptions } from '../store/sql/db.js';
import { MetaRepo } from '../store/sql/meta.js';
import { sealedValues } from '../store/accounts/sealed-values.js';
import { KEY_CHECK_AAD, KEY_CHECK_META, KEY_CHECK_PLAINTEXT } from '../domain/secrets/columns.js';

/** The sandbox's generated key, in the data dir beside svc.db (docs/operations.md "Secrets at rest"). */
export const KEY_FILE = 'secret.key';

export type KeySource = 'env' | 'file' | 'generated';

export const keyFilePath = (dataDir: string): string => path.join(dataDir, KEY_FILE);

function readKeyFile(file: string): SecretKey {
  const parsed = parseSecretKey(fs.readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new ConfigError(`${file} must hold the sandbox's SVC_SECRET_KEY as 64 hex characters; restore it or set SVC_SECRET_KEY`);
  return parsed.key;
}

/**
 * The key a command that moves a database holds its sealed values against: SVC_SECRET_KEY when
 * set, else the sandbox's key file in `dir` if there is one (never a new one). Null when neither.
 */
export function givenKey(config: Pick<Config, 'secretKey'>, dir: string): { key: SecretKey; from: string } | null {
  if (config.secretKey) return { key: config.secretKey, from: 'SVC_SECRET_KEY' };
  const file = keyFilePath(dir);
  return fs.existsSync(file) ? { key: readKeyFile(file), from: file } : null;
}

/**
 * The deployment key: SVC_SECRET_KEY when set. Without it production refuses to start; the
 * sandbox uses the key it generated into the data dir on its first start (mode 0600), or
 * generates it now. Returns the config with the key filled in.
 */
export function resolveSecretKey(config: Config): { config: Config; source: KeySource } {
  if (config.secretKey) return { config, source: 'env' };
  if (config.env === 'production') {
    throw new ConfigError('SVC_SECRET_KEY is required in production: 32 bytes as 64 hex characters (openssl rand -hex 32); it encrypts webhook secrets at rest');
  }
  const file = keyFilePath(config.dataDir);
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    const key = generateSecretKey();
    // 'wx': two processes starting at once on a fresh data dir keep one key, the first written.
    fs.writeFileSync(file, `${key.toHex()}\n`, { flag: 'wx', mode: 0o600 });
    return { config: { ...config, secretKey: key }, source: 'generated' };
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  }
  return { config: { ...config, secretKey: readKeyFile(file) }, source: 'file' };
}

/** Writes a new sandbox key file in place of the old one, atomically (after a key rotation). */
export function replaceKeyFile(dataDir: string, key: SecretKey): void {
  const file = keyFilePath(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key.toHex()}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The sealing of this deployment; the config must carry its key (resolveSecretKey, or SVC_SECRET_KEY in tests). */
export function secretBoxOf(config: Pick<Config, 'secretKey'>): SecretBox {
  if (!config.secretKey) throw new Error('no secret key configured: call resolveSecretKey first (docs/operations.md "Secrets at rest")');
  return new SecretBox(config.secretKey);
}

export class WrongSecretKeyError extends ConfigError {}

/** Why a key does not open a database's sealed values: the key check, or endpoint secrets under another key. */
export type KeyMismatch = { what: 'check'; sealedUnder: string } | { what: 'endpoint_secrets'; sealedUnder: string; count: number };

/**
 * Holds `box` against what a database keeps sealed: the key check (which must open under it,
 * to its known plaintext) and every endpoint secret (which must name one of its keys). Null when
 * the key fits, or when there is nothing to hold it against.
 */
export function keyMismatch(box: SecretBox, check: string | undefined, endpointSecrets: readonly string[]): KeyMismatch | null {
  if (check !== undefined) {
    const opened = openSealed(box.keys, check, KEY_CHECK_AAD);
    if (!opened.ok || opened.plaintext !== KEY_CHECK_PLAINTEXT) return { what: 'check', sealedUnder: sealedKeyId(check) ?? 'unknown' };
  }
  const known = new Set(box.keys.map((key) => key.id));
  const foreign = endpointSecrets.filter((v) => !known.has(sealedKeyId(v) ?? ''));
  return foreign.length > 0 ? { what: 'endpoint_secrets', sealedUnder: sealedKeyId(foreign[0]) ?? 'unknown', count: foreign.length } : null;
}

/**
 * Refuses a key that is not the one the database's secrets were sealed under: a wrong key would
 * otherwise start, then fail every delivery. The first start with a key records a sealed check
 * value; every sealed endpoint secret must name this key too.
 */
export async function verifySecretKey(db: Db, box: SecretBox): Promise<void> {
  const { check, endpointSecrets } = await sealedValues(db, KEY_CHECK_META);
  const mismatch = keyMismatch(box, check, endpointSecrets);
  if (mismatch?.what === 'check') {
    throw new WrongSecretKeyError(
      `SVC_SECRET_KEY (key id ${box.current.id}) is not the key this database's secrets are encrypted with (key id ${mismatch.sealedUnder}); start with that key, or change keys with svc secrets rotate-key`,
    );
  }
  if (mismatch?.what === 'endpoint_secrets') {
    throw new WrongSecretKeyError(
      `${mismatch.count} webhook secret(s) are encrypted under key id ${mismatch.sealedUnder}, not SVC_SECRET_KEY (key id ${box.current.id}); start with that key, or change keys with svc secrets rotate-key`,
    );
  }
  if (check === undefined) await new MetaRepo(db).claim(KEY_CHECK_META, box.seal(KEY_CHECK_PLAINTEXT, KEY_CHECK_AAD));
}

/**
 * Opens the store of a command that reads or writes secrets (serve, import, keys, secrets): the
 * key resolved, plaintext rows from before encryption sealed, and the key checked.
 */
export async function openStore(
  config: Config,
  opts: Pick<DbOptions, 'backgroundCheckpoint' | 'checkpointNice' | 'onConnectionError'> = {},
): Promise<{ db: Db; config: Config; box: SecretBox; keySource: KeySource }> {
  const resolved = resolveSecretKey(config);
  const box = secretBoxOf(resolved.config);
  const db = await openDb({ ...resolved.config, ...opts, secrets: box });
  try {
    await verifySecretKey(db, box);
  } catch (err) {
    await db.close();
    throw err;
  }
  return { db, config: resolved.config, box, keySource: resolved.source };
}
