import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, seededDataDir, startSvc } from './process.js';

const run = promisify(execFile);
const KEY = 'svc_test_CompiledCompiledCompiled0001';

// Production runs what `npm run build` emits with plain node: no TypeScript loader involved.
describe('compiled build (real process)', () => {
  it('npm run build emits JavaScript that serves, answers readiness and drains on SIGTERM', { timeout: 300_000 }, async () => {
    await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 240_000 });
    const p = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_BOOTSTRAP_KEY: KEY });
    try {
      const port = await p.port();
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(me.status).toBe(200);
    } finally {
      p.signal('SIGTERM');
    }
    expect(await p.exited).toEqual({ code: 0, signal: null });
    const loaded = await run(process.execPath, ['--conditions=svc-compiled', '-e', "import('@svc/schema').then((m) => console.log(import.meta.resolve('@svc/schema'), typeof m.Event))"], { cwd: path.join(ROOT, 'packages/server') });
    expect(loaded.stdout).toMatch(/packages\/schema\/dist\/index\.js object/);
  });
});
