// The system packages some tests need beyond Node, PostgreSQL and Redis, in one list: the tests
// ask it whether to run or skip (test/prerequisites.ts), `npm test` closes with what it skipped
// (scripts/test.mjs), and `.ci/run` installs them. Without `CI` a missing package skips the tests
// that need it, named with the command that installs it; with `CI` it is required and they fail
// (docs/testing.md, "What the full run needs").
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** Where the tests look for them; overridable so a test can fake a machine without them. */
export const CHROMIUM = process.env.SVC_TEST_CHROMIUM || '/usr/bin/chromium';
export const PYTHON = process.env.SVC_TEST_PYTHON || '/usr/bin/python3';

const pythonModule = (module) => () => spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore', timeout: 20_000 }).status === 0;

/** @type {readonly import('./prerequisites.mjs').Prerequisite[]} */
export const PREREQUISITES = [
  { name: 'chromium', package: 'chromium', neededBy: 'the browser tests of the pages (dashboard, status page, /docs/stream)', present: () => fs.existsSync(CHROMIUM) },
  { name: 'python3-httpx', package: 'python3-httpx', neededBy: 'the Python client checks', present: pythonModule('httpx') },
  { name: 'python3-websockets', package: 'python3-websockets', neededBy: 'the Python client checks', present: pythonModule('websockets') },
  { name: 'python3-pytest', package: 'python3-pytest', neededBy: 'the Python client checks', present: pythonModule('pytest') },
  { name: 'python3-mypy', package: 'python3-mypy', neededBy: 'the Python client checks', present: pythonModule('mypy') },
  { name: 'python3-pandas', package: 'python3-pandas', neededBy: 'the Python client test that reads the CSV export with pandas (skipped by pytest)', present: pythonModule('pandas') },
];

const known = new Map();
/** Whether a prerequisite is on this machine, checked once per process. */
export function isPresent(name) {
  const p = PREREQUISITES.find((x) => x.name === name);
  if (!p) throw new Error(`unknown prerequisite ${name}`);
  if (!known.has(name)) known.set(name, p.present());
  return known.get(name);
}

/** The command that installs these packages on this machine's kind (Debian). */
export function installCommand(names) {
  const packages = PREREQUISITES.filter((p) => names.includes(p.name)).map((p) => p.package);
  return `apt-get install -y ${packages.join(' ')}`;
}

/** The prerequisites among `names` that are missing, and the line a skip carries. */
export function missing(names) {
  const gone = names.filter((n) => !isPresent(n));
  return gone.length === 0 ? null : { names: gone, note: `needs ${gone.join(', ')}: ${installCommand(gone)}` };
}

export const required = () => Boolean(process.env.CI);

/**
 * At the start of a test that needs `names`: returns when they are all here; otherwise skips the
 * test with a note naming them and their install command, or fails it when they are required.
 */
export function requirePackages(ctx, names) {
  const gap = missing(names);
  if (!gap) return;
  if (required()) throw new Error(`CI is set and this test ${gap.note}`);
  ctx.skip(gap.note);
}
