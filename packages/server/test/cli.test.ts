import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { openDb } from '../src/store/db.js';
import { auth, testConfig, tmpDir } from './helpers.js';

const run = promisify(execFile);
const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');

function svc(args: string[], env: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
}

describe('svc CLI', () => {
  it('keys create --json prints the full key once; list and revoke work', async () => {
    const dir = tmpDir();
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dir, 'svc.db'));
    const env = { SVC_DATA_DIR: dir };
    const { stdout } = await svc(['keys', 'create', '--name', 'acme', '--plan', 'pro', '--products', 'live,archive', '--sports', 'soccer', '--json'], env);
    const created = JSON.parse(stdout);
    expect(created.key).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
    expect(created).toMatchObject({ name: 'acme', plan: 'pro', products: ['live', 'archive'], sports: ['soccer'] });

    const db = await openDb({ dataDir: dir, databaseUrl: null });
    const { app } = await buildApp({ config: testConfig(dir), db, clock: { now: () => Date.now() } });
    const me = await app.inject({ url: '/v1/me', headers: auth(created.key) });
    expect(me.json().data).toMatchObject({ id: created.id, plan: 'pro', sports: ['soccer'], rate_limit: { limit: 1000, window_s: 60 } });

    const list = await svc(['keys', 'list', '--json'], env);
    const listed = JSON.parse(list.stdout);
    expect(listed.find((k: { id: string }) => k.id === created.id)).toBeDefined();
    expect(list.stdout).not.toContain(created.key);

    await svc(['keys', 'revoke', created.id], env);
    const fresh = await buildApp({ config: testConfig(dir), db, clock: { now: () => Date.now() } });
    expect((await fresh.app.inject({ url: '/v1/me', headers: auth(created.key) })).statusCode).toBe(401);
    await app.close();
    await fresh.app.close();
    await db.close();
  });

  it('refuses bad arguments and bad configuration with one clear line', async () => {
    const dir = tmpDir();
    const badPlan = await svc(['keys', 'create', '--name', 'x', '--plan', 'gold'], { SVC_DATA_DIR: dir }).catch((e: { code: number; stderr: string }) => e);
    expect(badPlan).toMatchObject({ code: 2 });
    expect('stderr' in badPlan ? badPlan.stderr : '').toMatch(/--plan must be one of/);
    const badEnv = await svc(['keys', 'list'], { SVC_DATA_DIR: dir, SVC_PORT: 'eighty' }).catch((e: { code: number; stderr: string }) => e);
    expect(badEnv).toMatchObject({ code: 2 });
    expect('stderr' in badEnv ? badEnv.stderr : '').toMatch(/SVC_PORT/);
    const badKey = await svc(['keys', 'list'], { SVC_DATA_DIR: dir, SVC_BOOTSTRAP_KEY: 'svc_live_abcdefabcdefabcdefabcdef' }).catch((e: { code: number; stderr: string }) => e);
    expect('stderr' in badKey ? badKey.stderr : '').toMatch(/SVC_BOOTSTRAP_KEY/);
  });
});
