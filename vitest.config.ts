import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each test file has its own data dir, databases, Redis namespace and ports, so files run side
    // by side; most of a file's time is spent waiting on processes, sockets and timers, not CPU.
    // How the suite's wall time was measured: docs/testing.md.
    poolOptions: { forks: { minForks: 1, maxForks: 2, isolate: false } },
    globalSetup: ['packages/server/test/templates.setup.ts'],
  },
});
