// The checks after the build (package.json "test"): vitest, the Python client's checks, lint and
// the type check, side by side. The Python tests mostly wait on a server, stubs and timers, and
// lint and the type check are a few seconds of CPU that need not hold the suite back
// (docs/testing.md). vitest writes as it goes; the others' output follows it whole. Exits
// non-zero when any fails, naming which.
import { spawn } from 'node:child_process';

function run(command, args, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (capture) {
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
    }
    child.on('error', (err) => resolve({ code: 1, output: `${output}${command}: ${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const captured = [
  ['lint', run('npm', ['run', '--silent', 'lint'], true)],
  ['typecheck', run('npm', ['run', '--silent', 'typecheck'], true)],
  ['test:python', run('npm', ['run', '--silent', 'test:python'], true)],
];
const vitest = await run('npx', ['vitest', 'run'], false);
const failed = vitest.code !== 0 ? ['vitest'] : [];
for (const [name, job] of captured) {
  const { code, output } = await job;
  process.stdout.write(`\n> npm run ${name}\n${output}`);
  if (code !== 0) failed.push(name);
}
for (const name of failed) process.stderr.write(`test: ${name} failed\n`);
process.exit(failed.length > 0 ? 1 : 0);
