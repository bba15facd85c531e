// The suites after lint, typecheck and build (package.json "test"): vitest and the Python
// client's checks side by side, since the Python tests mostly wait on a server, stubs and
// timers (docs/testing.md). vitest writes as it goes; the Python output follows it whole.
// Exits non-zero when either fails.
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

const python = run('npm', ['run', '--silent', 'test:python'], true);
const vitest = await run('npx', ['vitest', 'run'], false);
const py = await python;
process.stdout.write(`\n> npm run test:python\n${py.output}`);
if (vitest.code !== 0) process.stderr.write(`test: vitest failed (exit ${vitest.code})\n`);
if (py.code !== 0) process.stderr.write(`test: the Python client's checks failed (exit ${py.code})\n`);
process.exit(vitest.code !== 0 || py.code !== 0 ? 1 : 0);
