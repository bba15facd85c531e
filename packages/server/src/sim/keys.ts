import crypto from 'node:crypto';
import { keyPrefix, type Config } from '../config.js';
import type { Db } from '../store/sql/db.js';
import { KeyRepo } from '../store/accounts/keys.js';
import { MetaRepo } from '../store/sql/meta.js';

const SECRET_KEY = 'sim_secret';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface SimKey {
  label: string;
  key: string;
  keyId: string;
}

export interface SimKeys {
  reporters: SimKey[];
  official: SimKey | null;
  /** The attackers' keys by label (`swarm`, `colluder-1`, …; plan.ts ATTACKER_KEYS); a revoked one sits out. */
  attackers: Map<string, SimKey>;
}

/**
 * The random secret the simulator's keys derive from, created once per database. Every process
 * that can read the database (`svc serve`, `svc simulate`, other nodes) derives the same keys,
 * so no plaintext key is ever printed or stored: only their hashes, like any other key.
 */
export async function simSecret(db: Db): Promise<string> {
  const meta = new MetaRepo(db);
  const found = await meta.get(SECRET_KEY);
  if (found !== undefined) return found;
  // Two processes starting together: the first insert wins and both read its value.
  await meta.claim(SECRET_KEY, crypto.randomBytes(32).toString('hex'));
  const stored = await meta.get(SECRET_KEY);
  if (stored === undefined) throw new Error('simulator secret could not be stored');
  return stored;
}

export function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

/** `<prefix>` + 32 base62 characters of HMAC-SHA256(secret, label). */
export function deriveKey(secret: string, label: string, prefix: string): string {
  const mac = crypto.createHmac('sha256', secret).update(label).digest();
  return prefix + base62(mac).padStart(32, 'A').slice(0, 32);
}

/**
 * Reporter keys (product `report`) and the official feed's key (product `source`), on the
 * unmetered internal plan: a replay at a high speed must not be rate-limited into silence.
 * A key an operator revoked stays revoked; that reporter (or the official feed) sits out.
 */
export async function ensureSimKeys(db: Db, config: Config, reporters: number, now: Date, attackerLabels: readonly string[] = []): Promise<SimKeys> {
  const secret = await simSecret(db);
  const prefix = keyPrefix(config.env);
  const repo = new KeyRepo(db, config.env, prefix);
  const ensure = async (label: string, name: string, product: 'report' | 'source'): Promise<SimKey | null> => {
    const key = deriveKey(secret, label, prefix);
    const record = await repo.ensureKey(key, { name, plan: 'internal', products: [product] }, now);
    return record.revoked_at === null ? { label, key, keyId: record.id } : null;
  };
  const out: SimKeys = { reporters: [], official: await ensure('official', 'simulator: official feed', 'source'), attackers: new Map() };
  for (let i = 1; i <= reporters; i++) {
    const k = await ensure(`reporter-${i}`, `simulator: reporter ${i}`, 'report');
    if (k) out.reporters.push(k);
  }
  for (const label of attackerLabels) {
    const k = await ensure(`attacker-${label}`, `simulator: attacker ${label}`, 'report');
    if (k) out.attackers.set(label, k);
  }
  return out;
}
