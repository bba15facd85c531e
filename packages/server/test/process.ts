import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { tmpDir } from './helpers.js';
import { freePort } from './ports.js';

export { freePort };

/**
 * The one way tests start `svc`: the compiled build, as `npm start` runs it (the suite's global
 * setup builds it once per run). A compiled start takes a fraction of a TypeScript loader's, which
 * matters when a dozen test files each start several processes on two vCPUs.
 */
export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const COMPILED_MAIN = path.join(ROOT, 'packages/server/dist/main.js');
/** The node arguments that run the compiled `svc`, before its own arguments. */
export const SVC_NODE_ARGS: readonly string[] = ['--conditions=svc-compiled', COMPILED_MAIN];
/**
 * Node's on-disk cache of compiled code for the processes tests start: the suite starts `svc`
 * more than a hundred times, and a CLI command's start costs about 14 % less CPU with it
 * (docs/testing.md "What makes it fast"). Keyed by each file's contents, so a rebuild is safe.
 */
export const COMPILE_CACHE = path.join(ROOT, 'node_modules/.cache/svc-compile');

/** A data dir holding a copy of the run's imported archive, so `svc serve` skips the import. */
export function seededDataDir(): string {
  const dir = tmpDir();
  fs.copyFileSync(inject('sqliteTemplate'), path.join(dir, 'svc.db'));
  return dir;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** A real `svc` process, its output collected line by line. */
export class SvcProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<Exit>;
  /** `http://127.0.0.1:<port>` once `serveSvc` has seen it answer; '' before. */
  base = '';
  private combined = '';
  private readonly text = { stdout: '', stderr: '' };
  private done = false;
  private readonly waiters = new Set<() => void>();

  constructor(readonly child: ChildProcess) {
    const lines = (stream: 'stdout' | 'stderr') => {
      const into = this[stream];
      let rest = '';
      return (chunk: Buffer) => {
        const text = chunk.toString();
        this.combined += text;
        this.text[stream] += text;
        rest += text;
        const parts = rest.split('\n');
        rest = parts.pop() ?? '';
        into.push(...parts);
        this.wake();
      };
    };
    child.stdout?.on('data', lines('stdout'));
    child.stderr?.on('data', lines('stderr'));
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.done = true;
        this.wake();
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Everything the process wrote to stdout and stderr, in the order it arrived. */
  output(): string {
    return this.combined;
  }

  /** Everything the process wrote to `stream`, as written. */
  written(stream: 'stdout' | 'stderr'): string {
    return this.text[stream];
  }

  /** The JSON log lines on stdout (every stdout line must be one). */
  logs(): Record<string, unknown>[] {
    return this.stdout.filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  }

  /** Resolves with the first line of `stream` matching `re`; rejects if the process exits first or after `timeoutMs`. */
  async line(stream: 'stdout' | 'stderr', re: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const l of this[stream]) {
        const m = re.exec(l);
        if (m) return m;
      }
      if (this.done) throw new Error(`svc exited before printing ${re} on ${stream}; stderr: ${this.stderr.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} on ${stream}; stderr: ${this.stderr.join('\n')}`);
      await this.nextOutput(200);
    }
  }

  /** The port from Fastify's "Server listening at" log line. */
  async port(): Promise<number> {
    const m = await this.line('stdout', /Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
    return Number(m[1]);
  }

  /** Sends `sig` and returns at once. */
  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  /** SIGKILL: a hard crash, no shutdown work at all; resolves when the process is gone. */
  async kill(): Promise<void> {
    if (this.exitedAlready()) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, as an orchestrator stops a node; SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.exitedAlready()) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private exitedAlready(): boolean {
    return this.done || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }

  private nextOutput(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const w = () => {
        this.waiters.delete(w);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(w, ms);
      this.waiters.add(w);
    });
  }
}

/**
 * Starts `svc <args>` with `env` on top of a clean environment (no inherited SVC_*), listening on
 * a port of its own choosing on 127.0.0.1, without the simulator. Returns at once. `stdout`: a
 * file descriptor the process writes its log to instead of a pipe the test reads (a full or
 * closed pipe of the test's own making); `nodeArgs`: Node's own options, before the entry point.
 */
export function startSvc(args: string[], env: Record<string, string>, opts: { stdout?: number; nodeArgs?: readonly string[] } = {}): SvcProcess {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...SVC_NODE_ARGS, ...args], {
    cwd: ROOT,
    env: { ...base, NODE_COMPILE_CACHE: COMPILE_CACHE, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_SIMULATOR: 'off', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', opts.stdout ?? 'pipe', 'pipe'],
  });
  return new SvcProcess(child);
}

/** Runs `svc <args>` to completion (as `startSvc`); SIGKILL after `timeoutMs`. */
export async function runSvc(
  args: string[],
  env: Record<string, string>,
  opts: { nodeArgs?: readonly string[]; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const p = startSvc(args, env, { nodeArgs: opts.nodeArgs });
  const timer = setTimeout(() => p.signal('SIGKILL'), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.written('stdout'), stderr: p.written('stderr') };
}

/**
 * `svc serve` on SQLite in `dataDir` (unless `env` names a database), on `port` (a free one by
 * default), logging warnings only; resolves once `/healthz` answers, with `base` set.
 */
export async function serveSvc(dataDir: string, env: Record<string, string> = {}, port?: number): Promise<SvcProcess> {
  port ??= await freePort();
  const p = startSvc(['serve'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_LOG_LEVEL: 'warn', ...env });
  const base = `http://127.0.0.1:${port}`;
  const end = Date.now() + 90_000;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`svc exited ${p.child.exitCode}:\n${p.output()}`);
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      await p.kill();
      throw new Error(`svc did not start:\n${p.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  p.base = base;
  return p;
}
