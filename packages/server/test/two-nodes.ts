import { Redis } from 'ioredis';
import { buildApp, type BuiltApp } from '../src/app.js';
import { RedisBus } from '../src/bus/redis-bus.js';
import { redisKeys } from '../src/bus/redis-keys.js';
import type { Config } from '../src/config.js';
import { systemClock } from '../src/domain/clock.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { freshDb, testConfig } from './helpers.js';

/** One in-process node of a test cluster: its app listening on a free port, its own pool and Redis connections. */
export interface ClusterNode {
  built: BuiltApp;
  db: Db;
  redis: Redis;
  bus: RedisBus;
  http: string;
  ws: string;
}

/**
 * Two nodes on one fresh PostgreSQL database and one Redis, as a deployment runs them: each
 * builds its app with its own pool and Redis connections. The Redis prefix is the database's
 * own, so other test runs sharing this Redis never reach these nodes (docs/operations.md).
 */
export async function startTwoNodes(redisUrl: string, overrides: Partial<Config> = {}): Promise<ClusterNode[]> {
  const first = await freshDb('postgres');
  const prefix = `svc-test:${first.databaseUrl?.split('/').pop() ?? ''}:`;
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < 2; i++) {
    const db = i === 0 ? first.db : await openDb({ dataDir: first.dataDir, databaseUrl: first.databaseUrl, poolSize: 5 });
    const redis = new Redis(redisUrl);
    const bus = new RedisBus(redis, redis.duplicate(), redisKeys(prefix));
    await bus.whenReady();
    const config = testConfig(first.dataDir, { databaseUrl: first.databaseUrl, redisPrefix: prefix, ...overrides });
    const built = await buildApp({ config, db, clock: systemClock, redis, bus });
    await built.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = built.app.server.address();
    if (!addr || typeof addr === 'string') throw new Error('no address');
    nodes.push({ built, db, redis, bus, http: `http://127.0.0.1:${addr.port}`, ws: `ws://127.0.0.1:${addr.port}` });
  }
  return nodes;
}

export async function stopNodes(nodes: readonly ClusterNode[]): Promise<void> {
  for (const n of nodes) {
    await n.built.app.close();
    await n.bus.close();
    await n.db.close();
    n.redis.disconnect();
  }
}
