// A vitest setup file that writes each test file's CPU time (its fork's own and that of the
// processes it started and reaped: svc, pytest, mypy, Chromium), wall time and start (Unix ms) to
// $SVC_TEST_CPU_LOG, one tab-separated line a file. Used by vitest.cpu.config.ts to find where
// the suite's CPU goes (docs/testing.md, "How the time was measured"); Linux only (/proc).
import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

const log = process.env.SVC_TEST_CPU_LOG ?? 'cpu-per-file.tsv';

/** CPU-seconds of this process and its reaped children: utime, stime, cutime, cstime. */
function cpuSeconds(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return ticks / 100;
}

let cpuAtStart = 0;
let wallAtStart = 0;
beforeAll(() => {
  cpuAtStart = cpuSeconds();
  wallAtStart = Date.now();
});
// vitest reads the first parameter as the fixtures it needs: none here.
afterAll(({}, suite) => {
  const file = suite.file.name;
  fs.appendFileSync(log, `${(cpuSeconds() - cpuAtStart).toFixed(1)}\t${((Date.now() - wallAtStart) / 1000).toFixed(1)}\t${wallAtStart}\t${file}\n`);
});
