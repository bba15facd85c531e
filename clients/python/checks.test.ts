import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PYTHON, requirePackages } from '../../scripts/prerequisites.mjs';

/**
 * The Python client's own checks, run with Debian's python3 and its packages (there is no PyPI
 * here): mypy --strict over the package, its examples and its tests, then its pytest suite (which
 * starts the compiled svc, see tests/conftest.py). On a machine without those packages both are
 * skipped by name with the command that installs them; under CI they are required
 * (docs/testing.md, "What the full run needs").
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['python3-httpx', 'python3-websockets', 'python3-pytest', 'python3-mypy'];

function python(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the Python client (clients/python)', () => {
  it('type-checks under mypy --strict: the package, its examples and its tests', { timeout: 180_000 }, async (ctx) => {
    requirePackages(ctx, PACKAGES);
    const { code, output } = await python(
      ['-m', 'mypy', '--strict', '--python-version', '3.9', 'clients/python/src', 'clients/python/examples', 'clients/python/tests'],
      { MYPYPATH: 'clients/python/src' },
    );
    expect(code, output).toBe(0);
  });

  it('passes its pytest suite against the compiled svc', { timeout: 420_000 }, async (ctx) => {
    requirePackages(ctx, PACKAGES);
    const { code, output } = await python(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'clients/python/tests']);
    // Exit 5 (no test collected) is a failure too: the suite must have run.
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
  });
});
