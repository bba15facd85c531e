import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A machine without the system packages some tests need (scripts/prerequisites.mjs), faked by
 * pointing the tests at a chromium and a python3 that are not there: the tests that need them are
 * skipped, named with the install command, and the run passes; with CI set the same run fails.
 * Each case is a vitest of its own over a browser test and the real Python client checks.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CONFIG = 'packages/server/test/fixtures/prerequisites.vitest.config.ts';

function vitest(env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', CONFIG, '--reporter', 'verbose'], {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, '') }));
  });
}

const MISSING = { SVC_TEST_CHROMIUM: '/nonexistent/chromium', SVC_TEST_PYTHON: '/nonexistent/python3' };

describe('system packages a test needs', () => {
  it('skips by name, with the install command, what needs a missing package, and the run passes', async () => {
    const { code, output } = await vitest({ ...MISSING, CI: undefined });
    expect(code, output).toBe(0);
    expect(output).toMatch(/opens a page in chromium \d+ms \[needs chromium: apt-get install -y chromium\]/);
    expect(output).toContain(
      '[needs python3-httpx, python3-websockets, python3-pytest, python3-mypy: apt-get install -y python3-httpx python3-websockets python3-pytest python3-mypy]',
    );
    // One browser test; the Python client's checks (mypy and the pytest shards, one test).
    expect(output).toMatch(/Tests  2 skipped \(2\)/);
  });

  it('fails the same tests when CI is set', async () => {
    const { code, output } = await vitest({ ...MISSING, CI: '1' });
    expect(code, output).toBe(1);
    expect(output).toMatch(/2 failed/);
    expect(output).toContain('CI is set and this test needs chromium: apt-get install -y chromium');
  });
});
