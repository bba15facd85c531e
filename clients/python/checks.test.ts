import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { PYTHON, requirePackages } from '../../scripts/prerequisites.mjs';
import { COMPILE_CACHE } from '../../packages/server/test/process.js';

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

/**
 * pytest in shards run side by side, each with its svc of its own (tests/conftest.py): the suite
 * mostly waits (on Retry-After, on a replay's plays, on reconnects), so one process took most of
 * two minutes of wall time for a few dozen CPU-seconds. The slowest files (pytest --durations:
 * the README's examples about 33 s, Retry-After 27 s, retries 11 s) each lead a shard; every
 * other file, a new one included, runs in the last.
 */
const SHARDS: readonly (readonly string[])[] = [['test_readme.py'], ['test_retry_after.py', 'test_retries.py']];
const TESTS = 'clients/python/tests';

function shardArgs(index: number): string[] {
  if (index < SHARDS.length) return (SHARDS[index] ?? []).map((file) => `${TESTS}/${file}`);
  return [TESTS, ...SHARDS.flat().map((file) => `--ignore=${TESTS}/${file}`)];
}

describe('the Python client (clients/python)', () => {
  // One test that runs mypy and the shards side by side: as tests of a concurrent suite, several
  // ran past a minute at once on a slower machine, and vitest failed green runs with "Timeout
  // calling onTaskUpdate" (docs/testing.md "Long tests").
  it('type-checks under mypy --strict and passes its pytest suite against the compiled svc (in shards, side by side)', { timeout: 420_000 }, async (ctx) => {
    requirePackages(ctx, PACKAGES);
    const mypy = python(
      ['-m', 'mypy', '--strict', '--python-version', '3.9', 'clients/python/src', 'clients/python/examples', 'clients/python/tests'],
      { MYPYPATH: 'clients/python/src' },
    );
    const shards = Array.from({ length: SHARDS.length + 1 }, (_, index) =>
      python(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...shardArgs(index)], {
        SVC_TEST_ARCHIVE_DB: inject('sqliteTemplate'),
        SVC_TEST_COMPILED: '1',
        // The svc processes pytest starts share the suite's compiled-code cache (test/process.ts).
        NODE_COMPILE_CACHE: COMPILE_CACHE,
      }),
    );
    const typed = await mypy;
    expect(typed.code, typed.output).toBe(0);
    for (const [index, shard] of (await Promise.all(shards)).entries()) {
      // Exit 5 (no test collected) is a failure too: every shard must have run.
      expect(shard.code, `shard ${index}: ${shard.output}`).toBe(0);
      expect(shard.output).toMatch(/\d+ passed/);
    }
  });
});
