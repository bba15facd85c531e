import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { listen, testApp, tmpDir, type TestApp } from '../../server/test/helpers.js';
import { Svc, type ClientOptions } from '../src/index.js';
import { freePort, serveSvc, type SvcProcess as ServerProcess } from '../../server/test/process.js';

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


/** `svc serve` as its own process on a copy of the test archive; SIGKILL-able and restartable on its port. */
export class SvcProcess {
  private running: ServerProcess | null = null;

  private constructor(
    readonly dataDir: string,
    readonly port: number,
    readonly key: string,
  ) {}

  static async create(key: string): Promise<SvcProcess> {
    const dataDir = tmpDir('svc-client-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    return new SvcProcess(dataDir, await freePort(), key);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.running = await serveSvc(this.dataDir, { SVC_BOOTSTRAP_KEY: this.key }, this.port);
  }

  /** SIGKILL: the server is gone at once, as in a crash. */
  async kill(): Promise<void> {
    await this.running?.kill();
    this.running = null;
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
