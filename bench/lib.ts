import { spawn, type ChildProcess } from 'node:child_process';
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
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (b: Buffer) => {
      out += b.toString();
    });
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

/** Starts `svc serve` with the bench's data dir and bootstrap key. */
export function startSvc(port: number, extra: Record<string, string> = {}): Promise<ChildProcess> {
  return startProcess(
    ['packages/server/src/main.ts', 'serve'],
    {
      SVC_PORT: String(port),
      SVC_DATA_DIR: path.join(ROOT, 'bench/.out/data'),
      SVC_SIMULATOR: 'off',
      SVC_BOOTSTRAP_KEY: BENCH_KEY,
      SVC_LOG_LEVEL: 'warn',
      ...extra,
    },
    /svc is running/,
  );
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
