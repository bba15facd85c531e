import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_KEY = 'svc_test_BenchBenchBenchBenchBenchBench00';

/** Starts a Node script in its own process and resolves once it prints `line`. */
export function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (b: Buffer) => {
      out += b.toString();
      if (ready.test(out)) resolve(child);
    };
    // svc serve prints its banner on stderr, the bench's own servers on stdout.
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited ${code}: ${out.slice(-2000)}`)));
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

/** The data dir every svc the benchmarks start uses (the export bench keeps its own). */
export const BENCH_DATA = path.join(ROOT, 'bench/.out/data');
const PRISTINE = path.join(ROOT, 'bench/.out/pristine');

/**
 * Puts BENCH_DATA back to the freshly imported archive, so a run starts from the same database
 * however many events and reports earlier runs appended (they grew it from 57 to 142 MB in a
 * day, and latency on the bigger file was not comparable). The first call imports the archive
 * once (`svc import`) into bench/.out/pristine; later calls copy that file.
 */
export async function resetBenchData(): Promise<void> {
  const pristine = path.join(PRISTINE, 'svc.db');
  if (!fs.existsSync(pristine)) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts', 'import'], {
        cwd: ROOT,
        env: { ...process.env, SVC_DATA_DIR: PRISTINE, SVC_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`svc import exited ${code}`))));
    });
  }
  fs.rmSync(BENCH_DATA, { recursive: true, force: true });
  fs.mkdirSync(BENCH_DATA, { recursive: true });
  fs.copyFileSync(pristine, path.join(BENCH_DATA, 'svc.db'));
  // The sandbox key the import sealed the database's secrets with: svc refuses to start without it.
  const key = path.join(PRISTINE, 'secret.key');
  if (fs.existsSync(key)) fs.copyFileSync(key, path.join(BENCH_DATA, 'secret.key'));
}

/** Starts `svc serve` with the bench's data dir and bootstrap key (`nodeArgs` go before the script). */
export function startSvc(port: number, extra: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ChildProcess> {
  return startProcess(
    [...nodeArgs, 'packages/server/src/main.ts', 'serve'],
    {
      SVC_PORT: String(port),
      SVC_DATA_DIR: BENCH_DATA,
      SVC_SIMULATOR: 'off',
      SVC_BOOTSTRAP_KEY: BENCH_KEY,
      SVC_LOG_LEVEL: 'warn',
      ...extra,
    },
    /svc is running/,
  );
}

/** The URL of `database` on the server an administrator URL points at. */
export function pgDatabaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
