import { systemClock } from '../src/domain/clock.js';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { auth, testConfig, tmpDir } from './helpers.js';

const PUBLIC_HOOK = 'https://hooks.example.com/svc';

/** Writes into `file` until the file system has no byte left. */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if (!(err instanceof Error && 'code' in err && err.code === 'ENOSPC')) throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The SQLite file's disk filling up under a node (docs/operations.md, "Faults"): a real file
 * system of a few megabytes over the database (tmpfs), filled to the last byte. Writes answer 503
 * `storage_full` and store nothing, reads go on, and once space is freed writes work again.
 */
describe('the SQLite disk full', () => {
  let mount = '';
  let db: Db | undefined;
  let built: BuiltApp | undefined;
  beforeAll(async () => {
    mount = tmpDir('svc-full-');
    const template = inject('sqliteTemplate');
    const size = fs.statSync(template).size + 8 * 1024 * 1024;
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount]);
    fs.copyFileSync(template, path.join(mount, 'svc.db'));
    db = await openDb({ dataDir: mount, databaseUrl: null });
    built = await buildApp({ config: testConfig(mount), db, clock: systemClock });
    await built.app.ready();
  });
  afterAll(async () => {
    await built?.app.close();
    await db?.close();
    if (mount) execFileSync('umount', ['-l', mount]);
  });

  it('answers writes with 503 storage_full while no byte is left, keeps serving reads, and takes writes again once space is freed', async () => {
    if (!built) throw new Error('unreachable');
    const app = built.app;
    const { key } = await built.services.keys.create({ name: 'full', plan: 'enterprise', products: ['live', 'archive'], sports: null, leagues: null }, new Date());
    const create = () => app.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...auth(key), 'content-type': 'application/json' }, payload: { url: PUBLIC_HOOK, tier: 'confirmed' } });
    const count = async () => {
      const res = await app.inject({ url: '/v1/webhooks?limit=100', headers: auth(key) });
      expect(res.statusCode).toBe(200);
      return (res.json() as { data: unknown[] }).data.length;
    };
    expect((await create()).statusCode).toBe(201);

    const filler = path.join(mount, 'filler');
    fillDisk(filler);
    // A commit may still fit in WAL space written before; the next ones need new blocks.
    let refused = await create();
    for (let i = 0; i < 50 && refused.statusCode === 201; i++) refused = await create();
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json().error).toMatchObject({ type: 'unavailable', code: 'storage_full' });
    expect(refused.json().error.message).not.toMatch(/SQLITE|ENOSPC/);
    // Reads go on.
    const before = await count();
    expect((await app.inject({ url: '/v1/competitions?league=wc&season=2022&limit=3', headers: auth(key) })).statusCode).toBe(200);

    fs.rmSync(filler);
    expect((await create()).statusCode).toBe(201);
    // The refused write stored nothing: one endpoint more than before, the one just made.
    expect(await count()).toBe(before + 1);
  });
});
