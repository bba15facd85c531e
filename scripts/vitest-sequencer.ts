import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test files that take longest, longest first (measured with vitest.cpu.config.ts, six forks
 * on two vCPUs: docs/testing.md). Six files run at once, and a long file started last keeps the
 * run going on one fork while the others idle; a fresh clone has no timings of its own for vitest
 * to order by, and file size (its fallback) puts short-but-slow process tests at the end. Files
 * not listed follow in vitest's own order (its recorded durations once it has them).
 */
const SLOWEST = [
  // An own primary and streaming replica, the archive imported, a failover: about 2 minutes.
  'server/test/pg-failover.test.ts',
  'server/test/replays.test.ts',
  'server/test/export.test.ts',
  // mypy and three pytest shards side by side, each against a real svc.
  'python/checks.test.ts',
  'server/test/replays-process.test.ts',
  'server/test/settled-days.test.ts',
  'server/test/redis-away.test.ts',
  'client/test/readme.test.ts',
  'client/test/package.test.ts',
  'server/test/archive.test.ts',
  'server/test/consensus-crash.test.ts',
  'server/test/export-formats-memory.test.ts',
  'server/test/dashboard.test.ts',
  'server/test/export-formats.test.ts',
  'server/test/helper-threads.test.ts',
  'server/test/cli.test.ts',
  'server/test/drain.test.ts',
  'server/test/pg-stall.test.ts',
  'server/test/pg-silent.test.ts',
  // initdb, then its processes stopped and continued twenty times while sessions come and go.
  'server/test/own-postgres.test.ts',
  'server/test/secrets-at-rest.test.ts',
];

const rank = (spec: TestSpecification): number => {
  const i = SLOWEST.findIndex((name) => spec.moduleId.endsWith(`/${name}`));
  return i === -1 ? SLOWEST.length : i;
};

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
