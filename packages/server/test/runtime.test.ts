import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MINIMUM_NODE_MAJOR, nodeRefusal } from '../src/process/runtime.js';
import { tmpDir } from './helpers.js';
import { ROOT, runSvc } from './process.js';

const run = promisify(execFile);

describe('supported Node.js releases', () => {
  it('runs on 22, 24 and 26, every release of each, and refuses anything older in one line naming 22', () => {
    for (const v of ['22.0.0', '22.23.3', '24.0.0', '24.19.0', '24.21.0', '26.0.0', '26.12.1', 'v26.12.1', '27.0.0']) expect(nodeRefusal(v), v).toBeNull();
    for (const v of ['20.20.2', 'v20.20.2', '21.7.3', '18.20.8', '0.12.18', '', 'not a version']) {
      const refusal = nodeRefusal(v);
      expect(refusal, v).toMatch(/^svc: Node\.js 22 or later is required/);
      expect(refusal).toContain(v);
      expect(refusal).not.toContain('\n');
    }
  });

  it('says the same as the engines field npm enforces', () => {
    const pkg: unknown = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ engines: { node: `>=${MINIMUM_NODE_MAJOR}` } });
    expect(fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });

  it('the compiled svc on an older Node exits 1 with that one line before it opens anything', async () => {
    // The release is faked before the entry point runs, as an older Node would report it.
    const dir = path.join(tmpDir(), 'data');
    for (const args of [['serve'], ['keys', 'list'], ['--help']]) {
      const r = await runSvc(args, { SVC_DATA_DIR: dir }, { nodeArgs: ['--import', 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})'] });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('svc: Node.js 22 or later is required (22, 24 and 26 are supported); this is Node.js 20.20.2\n');
    }
    expect(fs.existsSync(dir)).toBe(false);
    // The same build on this Node runs.
    expect(await runSvc(['--help'], { SVC_DATA_DIR: dir })).toMatchObject({ code: 0, stderr: '' });
  });

  it('the SQLite driver survives prepared statements collected by V8 and the database closing after them', async () => {
    // Node 24.19+ aborted in a statement's destructor with better-sqlite3 12 (docs/operations.md).
    const script = `
      import { createRequire } from 'node:module';
      const Database = createRequire(${JSON.stringify(path.join(ROOT, 'packages/server/package.json'))})('better-sqlite3');
      const db = new Database(${JSON.stringify(path.join(tmpDir(), 'gc.db'))});
      db.exec('create table t (n integer)');
      for (let i = 0; i < 40000; i++) db.prepare('select ? as n').get(i);
      for (let i = 0; i < 1000; i++) db.prepare('insert into t values (?)').run(i);
      for (let i = 0; i < 3; i++) globalThis.gc();
      const count = db.prepare('select count(*) as c from t').get().c;
      db.close();
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 50));
      globalThis.gc();
      process.stdout.write('rows ' + count + ' on ' + process.version);
    `;
    const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: ROOT, timeout: 50_000 });
    expect(stdout).toBe(`rows 1000 on ${process.version}`);
  });
});
