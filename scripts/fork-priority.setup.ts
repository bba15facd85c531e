import os from 'node:os';

/**
 * Runs in each test fork before its files: the fork, and every process it starts (svc servers,
 * Python, mypy), at a lower priority than vitest's main process. On a loaded two-vCPU machine the
 * main process, which answers every fork's progress reports, otherwise falls more than a minute
 * behind and vitest fails a green run with "Timeout calling onTaskUpdate" (its 60 s limit, not
 * configurable; docs/testing.md "Priorities"). PostgreSQL and Redis keep their own priority.
 */
const FORK_NICE = 5;
if (os.getPriority() < FORK_NICE) os.setPriority(FORK_NICE);
