// The checks after the build (package.json "test"): vitest (which runs the Python client's checks
// too, clients/python/checks.test.ts), lint and the type check, side by side: lint and the type
// check are a few seconds of CPU that need not hold the suite back (docs/testing.md). vitest
// writes as it goes; the others' output follows it whole. Exits non-zero when any fails, naming
// which, and closes with the tests skipped for a missing system package and how to install it.
import { spawn } from 'node:child_process';
import { installCommand, isPresent, PREREQUISITES, required } from './prerequisites.mjs';

/** `capture`: keep the output (true), or keep it and also write it as it comes ('tee'). */
function run(command, args, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
      if (capture === 'tee') process.stdout.write(d);
    });
    child.stderr.on('data', (d) => {
      output += d;
      if (capture === 'tee') process.stderr.write(d);
    });
    child.on('error', (err) => resolve({ code: 1, output: `${output}${command}: ${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const captured = [
  ['lint', run('npm', ['run', '--silent', 'lint'], true)],
  ['typecheck', run('npm', ['run', '--silent', 'typecheck'], true)],
];
const vitest = await run('npx', ['vitest', 'run'], 'tee');
const failed = vitest.code !== 0 ? ['vitest'] : [];
for (const [name, job] of captured) {
  const { code, output } = await job;
  process.stdout.write(`\n> npm run ${name}\n${output}`);
  if (code !== 0) failed.push(name);
}
const absent = required() ? [] : PREREQUISITES.filter((p) => !isPresent(p.name));
if (absent.length > 0) {
  process.stdout.write('\ntest: skipped for want of a system package (CI requires them; docs/testing.md):\n');
  for (const p of absent) process.stdout.write(`test:   ${p.neededBy}: needs ${p.name}\n`);
  process.stdout.write(`test: to run them: ${installCommand(absent.map((p) => p.name))}\n`);
}
for (const name of failed) process.stderr.write(`test: ${name} failed\n`);
process.exit(failed.length > 0 ? 1 : 0);
