// Reporter keys (product report, internal plan) made directly in the bench data dir, before a
// bench starts `svc serve` on it: for bench/consensus and bench/stream.
import { loadConfig, keyPrefix, openDb, KeyRepo } from '@svc/server';
import { BENCH_DATA } from './lib.js';

export async function reporterKeys(n: number, name: string): Promise<string[]> {
  const config = loadConfig({ SVC_DATA_DIR: BENCH_DATA, SVC_SIMULATOR: 'off' });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const { key } = await repo.create({ name: `${name} ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date());
      keys.push(key);
    }
    return keys;
  } finally {
    await db.close();
  }
}
