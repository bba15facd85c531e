import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './scripts/vitest-sequencer.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'clients/*/*.test.ts'],
    // A hang detector, not a speed check: on a two-vCPU machine running the whole suite a test's
    // fixed work takes several times its time alone (docs/testing.md "Long tests").
    testTimeout: 90_000,
    hookTimeout: 120_000,
    // expect.poll waits for something to arrive (a page's answer, a frame, a row): 1 s by default,
    // which a loaded two-vCPU machine misses while the thing still arrives (docs/testing.md
    // "Long tests"). A poll whose condition never holds still fails, at 15 s.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // Each test file has its own data dir, databases, Redis namespace and ports, so files run side
    // by side; most of a file's time is spent waiting on processes, sockets and timers, not CPU
    // (four forks kept two vCPUs 61 % busy), so six files at once on two vCPUs. How the suite's
    // wall time was measured: docs/testing.md.
    maxWorkers: 6,
    isolate: false,
    globalSetup: ['packages/server/test/templates.setup.ts'],
    sequence: { sequencer: SlowestFirstSequencer },
  },
});
