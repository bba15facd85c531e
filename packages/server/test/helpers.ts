import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { Product } from '@svc/schema';
import { buildApp, type BuiltApp } from '../src/app.js';
import { keyPrefix, loadConfig, type Config } from '../src/config.js';
import { ManualClock, systemClock, type Clock } from '../src/domain/clock.js';
import { openDb, type Db, type DbOptions } from '../src/store/sql/db.js';
import type { StoredEvent } from '../src/store/events/events.js';
import { KeyRepo } from '../src/store/accounts/keys.js';
import type { AppDeps } from '../src/services.js';
import { PG_ADMIN_URL, pgUrlFor, runTmpRoot } from './templates.setup.js';

export type EngineName = 'sqlite' | 'postgres';

/** Engines this run can test: PostgreSQL joins when reachable (global setup fails in CI otherwise). */
export function engines(): EngineName[] {
  return inject('pgTemplate') ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A fresh directory under the run's own temporary root, which the run's teardown removes. */
export function tmpDir(prefix = 'svc-test-'): string {
  const root = runTmpRoot(inject('runId'));
  fs.mkdirSync(root, { recursive: true });
  return fs.mkdtempSync(path.join(root, prefix));
}

/** A fresh database holding the imported archive: a copy of the run's template. */
export async function freshDb(
  engine: EngineName = 'sqlite',
  opts: Pick<DbOptions, 'onConnectionError'> = {},
): Promise<{ db: Db; dataDir: string; databaseUrl: string | null }> {
  const dataDir = tmpDir();
  if (engine === 'sqlite') {
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    return { db: await openDb({ dataDir, databaseUrl: null, ...opts }), dataDir, databaseUrl: null };
  }
  const template = inject('pgTemplate');
  if (!template) throw new Error('PostgreSQL is not available in this run');
  const name = `svc_t_${inject('runId')}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const databaseUrl = pgUrlFor(name);
  return { db: await openDb({ dataDir, databaseUrl, poolSize: 5, ...opts }), dataDir, databaseUrl };
}

/** One deployment key per test process: every app of a file can read what another sealed. */
export const TEST_SECRET_KEY = crypto.randomBytes(32).toString('hex');

export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  return loadConfig({ SVC_DATA_DIR: dataDir, SVC_SIMULATOR: 'off', SVC_SIMULATOR_DISRUPTIONS: 'off', SVC_LOG_LEVEL: 'silent', SVC_SECRET_KEY: TEST_SECRET_KEY }, overrides);
}

export interface TestApp extends BuiltApp {
  db: Db;
  clock: Clock;
  dataDir: string;
  key(opts?: { products?: Product[]; sports?: string[]; leagues?: string[]; plan?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function testApp(
  opts: { engine?: EngineName; clock?: Clock; config?: Partial<Config>; streamLimits?: AppDeps['streamLimits'] } = {},
): Promise<TestApp> {
  const { db, dataDir } = await freshDb(opts.engine);
  const clock = opts.clock ?? systemClock;
  const config = testConfig(dataDir, opts.config);
  const built = await buildApp({ config, db, clock, streamLimits: opts.streamLimits });
  await built.app.ready();
  return {
    ...built,
    db,
    clock,
    dataDir,
    async key(k = {}) {
      const { key } = await built.services.keys.create(
        {
          name: 'test',
          plan: k.plan ?? 'internal',
          products: k.products ?? ['live', 'archive', 'report', 'source', 'admin'],
          sports: k.sports ?? null,
          leagues: k.leagues ?? null,
        },
        new Date(clock.now()),
      );
      return key;
    },
    async close() {
      await built.app.close();
      await db.close();
    },
  };
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });

export { ManualClock };

/** Listens on a free loopback port and returns the HTTP and WebSocket base URLs. */
export async function listen(t: TestApp): Promise<{ port: number; http: string; ws: string }> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('server has no TCP address');
  return { port: addr.port, http: `http://127.0.0.1:${addr.port}`, ws: `ws://127.0.0.1:${addr.port}` };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `pred` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A stored event with only its seq to tell it apart, for the parts that route and order events. */
export const storedEvent = (seq: number): StoredEvent => ({
  seq,
  ownerKeyId: null,
  competitionId: 'c',
  seasonId: 's',
  sport: 'golf',
  league: 'sgt',
  event: {
    id: `evt_${seq}`, type: 'score', tier: 'provisional', game_id: 'golf_1', sport: 'golf', league: 'sgt', team: 'A', event_type: 'x', points: 1,
    clock: null, ts: '2026-01-01T00:00:00.000Z', confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: 1 }, schema: 'svc.event.v1',
  },
});

/** `n` sandbox keys of a plan, written straight into the database of a `svc serve` under test. */
export async function keysOf(dataDir: string, databaseUrl: string | null, n: number, plan: string, products: Product[]): Promise<string[]> {
  const db = await openDb({ dataDir, databaseUrl });
  try {
    const repo = new KeyRepo(db, 'sandbox', keyPrefix('sandbox'));
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push((await repo.create({ name: `${plan} ${i}`, plan, products, sports: null, leagues: null }, new Date())).key);
    return keys;
  } finally {
    await db.close();
  }
}
