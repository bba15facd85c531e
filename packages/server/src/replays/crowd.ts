import { keyPrefix, type Config } from '../config.js';
import type { Db } from '../store/sql/db.js';
import { KeyRepo } from '../store/accounts/keys.js';
import { deriveKey, simSecret } from '../sim/keys.js';
import { CROWD_SIZE } from './plan.js';

/**
 * The key ids of a replay's crowd: reporter keys (product `report`, internal plan) derived from
 * the simulator's secret like its own keys (sim/README.md, "Keys"), so every node finds the same
 * ones and no plaintext key is kept. The driver reports through the consensus in process, so the
 * keys only name the reporters. A key an operator revoked sits out.
 */
export async function replayCrowd(db: Db, config: Config, now: Date): Promise<string[]> {
  const secret = await simSecret(db);
  const prefix = keyPrefix(config.env);
  const repo = new KeyRepo(db, config.env, prefix);
  const ids: string[] = [];
  for (let i = 1; i <= CROWD_SIZE; i++) {
    const record = await repo.ensureKey(deriveKey(secret, `replay-reporter-${i}`, prefix), { name: `replays: reporter ${i}`, plan: 'internal', products: ['report'] }, now);
    if (record.revoked_at === null) ids.push(record.id);
  }
  return ids;
}
