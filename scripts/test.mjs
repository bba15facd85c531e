// `npm test` (package.json "test"): vitest (which runs the Python client's checks too,
// clients/python/checks.test.ts), lint and the type check, side by side: lint and the type check
// need not hold the suite back (docs/testing.md). The build is vitest's global setup's
// (test/templates.setup.ts builds it, incrementally, while it imports the archive), not a step
// of its own before everything: the same tsc projects, once a run instead of twice. vitest
// writes as it goes; the others' output follows it whole. Exits non-zero when any fails, naming
// which, and closes with the tests skipped for a missing system package and how to install it.
import { spawn } from 'node:child_process';
import { installCommand, isPresent, PREREQUISITES, required } from './prerequisites.mjs';

/** Runs a command and keeps its output, to be written after vitest's. */
function captured(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ code: 1, output: `${output}${command}: ${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

/** Runs a command whose output goes straight through; resolves to its exit code. */
function through(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (err) => {
      process.stderr.write(`${command}: ${err.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const checks = [
  ['lint', captured('npm', ['run', '--silent', 'lint'])],
  ['typecheck', captured('npm', ['run', '--silent', 'typecheck'])],
];
const failed = (await through('npx', ['vitest', 'run'])) !== 0 ? ['vitest'] : [];
for (const [name, job] of checks) {
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
