import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './process.js';

/**
 * A redis-server of the test's own on a free port, so a test can stop and restart it without
 * touching the machine's Redis that other tests share.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.resume();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port and waits until it answers PING. */
  async resume(): Promise<void> {
    if (this.child) return;
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probe = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    probe.on('error', () => undefined);
    try {
      for (let i = 0; i < 100; i++) {
        try {
          if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`redis-server did not answer on port ${this.port}`);
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILL: Redis is gone at once, as in a crash or a network cut. */
  async stop(): Promise<void> {
    const c = this.child;
    if (!c) return;
    this.child = null;
    if (c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }
}
