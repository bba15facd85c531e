import type { Redis } from 'ioredis';
import { migrationsAtHead, ping, type Db } from '../store/sql/db.js';

/** A dependency that does not answer within this long counts as down. */
const CHECK_TIMEOUT_MS = 2_000;

export type CheckName = 'database' | 'redis' | 'migrations';
export type CheckResult = 'ok' | 'failing' | 'not_configured';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function ok(probe: () => Promise<boolean>): Promise<CheckResult> {
  try {
    return (await withTimeout(probe(), CHECK_TIMEOUT_MS)) ? 'ok' : 'failing';
  } catch {
    return 'failing';
  }
}

/** What readiness depends on: the database answers, Redis answers (when configured), the schema is at head. */
export async function readinessChecks(s: { db: Db; redis: Redis | null }): Promise<Record<CheckName, CheckResult>> {
  const redis = s.redis;
  const [database, redisCheck, migrations] = await Promise.all([
    ok(async () => {
      await ping(s.db);
      return true;
    }),
    redis ? ok(async () => (await redis.ping()) === 'PONG') : Promise.resolve<CheckResult>('not_configured'),
    ok(() => migrationsAtHead(s.db)),
  ]);
  return { database, redis: redisCheck, migrations };
}
