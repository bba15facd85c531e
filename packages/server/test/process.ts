import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { tmpDir } from './helpers.js';

export const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');

/** A data dir holding a copy of the run's imported archive, so `svc serve` skips the import. */
export function seededDataDir(): string {
  const dir = tmpDir();
  fs.copyFileSync(inject('sqliteTemplate'), path.join(dir, 'svc.db'));
  return dir;
}

/** A real `svc` process (through tsx), its output collected line by line. */
export class SvcProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();

  constructor(readonly child: ChildProcess) {
    const lines = (into: string[]) => {
      let rest = '';
      return (chunk: Buffer) => {
        rest += chunk.toString();
        const parts = rest.split('\n');
        rest = parts.pop() ?? '';
        into.push(...parts);
        for (const w of this.waiters) w();
      };
    };
    child.stdout?.on('data', lines(this.stdout));
    child.stderr?.on('data', lines(this.stderr));
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** The JSON log lines on stdout (every stdout line must be one). */
  logs(): Record<string, unknown>[] {
    return this.stdout.filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  }

  /** Resolves with the first line of `stream` matching `re`; rejects if the process exits first or after `timeoutMs`. */
  async line(stream: 'stdout' | 'stderr', re: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
      for (const w of this.waiters) w();
    });
    for (;;) {
      for (const l of this[stream]) {
        const m = re.exec(l);
        if (m) return m;
      }
      if (exited) throw new Error(`svc exited before printing ${re} on ${stream}; stderr: ${this.stderr.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} on ${stream}; stderr: ${this.stderr.join('\n')}`);
      await new Promise<void>((resolve) => {
        const w = () => {
          this.waiters.delete(w);
          resolve();
        };
        this.waiters.add(w);
        setTimeout(w, 200);
      });
    }
  }

  /** The port from Fastify's "Server listening at" log line. */
  async port(): Promise<number> {
    const m = await this.line('stdout', /Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
    return Number(m[1]);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }
}

/** Starts `svc <args>` with the given environment on top of a clean one (no inherited SVC_*). */
export function startSvc(args: string[], env: Record<string, string>): SvcProcess {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...base, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_SIMULATOR: 'off', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new SvcProcess(child);
}

/** Runs `svc <args>` to completion. */
export async function runSvc(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = startSvc(args, env);
  const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout.join('\n'), stderr: p.stderr.join('\n') };
}
