import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { listen, testApp, tmpDir, type TestApp } from '../../server/test/helpers.js';
import { Svc, type ClientOptions } from '../src/index.js';
import { freePort } from '../../server/test/svc-process.js';

export { freePort };

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const CLIENT_DIR = path.join(ROOT, 'packages/client');
export const VECTORS_DIR = path.join(ROOT, 'packages/schema/test-vectors');

/** A real svc listening on a loopback port, with a client for an all-products key. */
export interface LiveSvc {
  t: TestApp;
  baseUrl: string;
  key: string;
  svc: Svc;
  client(opts?: ClientOptions): Svc;
  close(): Promise<void>;
}

export async function liveSvc(config: Parameters<typeof testApp>[0] = {}): Promise<LiveSvc> {
  const t = await testApp(config);
  const { http } = await listen(t);
  const key = await t.key();
  const client = (opts: ClientOptions = {}) => new Svc({ apiKey: key, baseUrl: http, maxRetries: 0, ...opts });
  return { t, baseUrl: http, key, svc: client(), client, close: () => t.close() };
}


/** `svc serve` as its own process on a copy of the test archive; SIGKILL-able and restartable. */
export class SvcProcess {
  readonly dataDir: string;
  readonly port: number;
  readonly key: string;
  child: ChildProcess | null = null;
  output = '';

  private constructor(dataDir: string, port: number, key: string) {
    this.dataDir = dataDir;
    this.port = port;
    this.key = key;
  }

  static async create(key: string): Promise<SvcProcess> {
    const dataDir = tmpDir('svc-client-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    return new SvcProcess(dataDir, await freePort(), key);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const p = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        SVC_DATA_DIR: this.dataDir,
        SVC_PORT: String(this.port),
        SVC_HOST: '127.0.0.1',
        SVC_SIMULATOR: 'off',
        SVC_BOOTSTRAP_KEY: this.key,
        SVC_LOG_LEVEL: 'warn',
        SVC_DATABASE_URL: '',
        SVC_REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = p;
    p.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    p.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    const end = Date.now() + 90_000;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`svc exited ${p.exitCode}:\n${this.output}`);
      try {
        if ((await fetch(`${this.baseUrl}/healthz`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`svc did not start:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await exited;
    this.child = null;
  }

  async dispose(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Official plays 31 s apart (each its own confirmed event: the consensus window is 30 s), ending `endMs`. */
export function goalPlays(competitorId: string, n: number, endMs: number): { period: { unit: string; num: number; label: string }; competitor_id: string; event_type: string; points: number; ts: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    period: { unit: 'half', num: 1, label: '1st half' },
    competitor_id: competitorId,
    event_type: 'goal',
    points: 1,
    ts: new Date(endMs - (n - i) * 31_000).toISOString(),
  }));
}
