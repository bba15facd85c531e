import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { importArchive } from '../src/archive/index.js';
import { isoDate } from '../src/domain/clock.js';
import { openDb } from '../src/store/sql/db.js';

const run = promisify(execFile);

export const PG_ADMIN_URL = process.env.SVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

declare module 'vitest' {
  export interface ProvidedContext {
    sqliteTemplate: string;
    pgTemplate: string | null;
    redisUrl: string | null;
    /** Prefix of every database this run creates, so its teardown drops only its own. */
    runId: string;
  }
}

export async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

async function redisReachable(): Promise<boolean> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** `npm run build` without npm: the schema, then the server, each an incremental tsc project. */
async function buildServer(): Promise<void> {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  for (const project of ['packages/schema/tsconfig.build.json', 'packages/server/tsconfig.build.json']) {
    try {
      await run(process.execPath, [tsc, '-p', project], { cwd: ROOT, timeout: 240_000 });
    } catch (e) {
      const out = e instanceof Error && 'stdout' in e ? String(e.stdout) : '';
      throw new Error(`building ${project} for the process tests failed:\n${out}`, { cause: e });
    }
  }
}

/** Where a run's temporary data dirs live (test/helpers.ts tmpDir), removed with the run. */
export function runTmpRoot(runId: string): string {
  return path.join(os.tmpdir(), `svc-run-${runId}`);
}

export function pgUrlFor(database: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Imports the real archive once per run into a SQLite template file and a PostgreSQL template
 * database; every test file starts from a copy, so suites are isolated and fast.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Tests that start `svc` start the compiled build (test/process.ts): build it while the archive imports.
  const built = buildServer();
  const today = isoDate(Date.now());
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-template-'));
  const db = await openDb({ dataDir: root, databaseUrl: null });
  await importArchive(db, { today });
  await db.close();
  project.provide('sqliteTemplate', path.join(root, 'svc.db'));

  const runId = `${process.pid}_${Date.now().toString(36)}`;
  project.provide('runId', runId);
  let pgTemplate: string | null = null;
  if (await pgReachable()) {
    pgTemplate = `svc_tpl_${runId}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${pgTemplate}`);
    await admin.end();
    const pdb = await openDb({ dataDir: root, databaseUrl: pgUrlFor(pgTemplate), poolSize: 4 });
    await importArchive(pdb, { today });
    await pdb.close();
  } else if (process.env.CI) {
    throw new Error(`CI is set but PostgreSQL is unreachable at ${PG_ADMIN_URL}`);
  }
  project.provide('pgTemplate', pgTemplate);

  const redisOk = await redisReachable();
  if (!redisOk && process.env.CI) throw new Error(`CI is set but Redis is unreachable at ${REDIS_URL}`);
  project.provide('redisUrl', redisOk ? REDIS_URL : null);
  await built;

  return async () => {
    fs.rmSync(root, { recursive: true, force: true });
    // Every data dir a test made (a copy of the archive each): gigabytes a run if left behind.
    fs.rmSync(runTmpRoot(runId), { recursive: true, force: true });
    if (pgTemplate) {
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      const dbs = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [`svc\\_t\\_${runId.replace(/_/g, '\\_')}\\_%`, pgTemplate]);
      for (const { datname } of dbs.rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      await admin.end();
    }
  };
}
