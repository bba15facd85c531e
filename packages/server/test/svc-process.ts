import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (addr && typeof addr !== 'string' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface SvcProcess {
  base: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL: a hard crash, no shutdown work at all. */
  kill(): Promise<void>;
}

/** A real `svc serve` on SQLite in `dataDir`, started as `npm start` would, listening on a free port. */
export async function startSvc(dataDir: string, env: Record<string, string>): Promise<SvcProcess> {
  const port = await freePort();
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_PORT: String(port),
      SVC_HOST: '127.0.0.1',
      SVC_SIMULATOR: 'off',
      SVC_LOG_LEVEL: 'warn',
      SVC_DATABASE_URL: '',
      SVC_REDIS_URL: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const end = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc exited ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`svc did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: child.pid ?? 0,
    output: () => output,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
