// The parts of a cluster the benchmarks start for themselves (bench/capacity.ts,
// bench/cluster-overhead.ts): a PostgreSQL and a Redis of their own, compiled `svc serve` nodes,
// stream clients that count frames, and each process's CPU and memory read from /proc.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import WebSocket from 'ws';
import { keyPrefix, loadConfig, openDb, KeyRepo } from '@svc/server';
import { BENCH_DATA, BENCH_KEY, ROOT } from './lib.js';

export { PgTripCounter } from '../packages/server/test/pg-trip-counter.js';

const TICK = 100;
const run = promisify(execFile);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a !== 'string' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** A process's user and system CPU-seconds (/proc/<pid>/stat utime, stime); throws once it is gone. */
function cpuTimes(pid: number): { user: number; system: number } {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: Number(f[11]) / TICK, system: Number(f[12]) / TICK };
}

/** CPU-seconds of a process (utime + stime), 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    const { user, system } = cpuTimes(pid);
    return user + system;
  } catch {
    return 0;
  }
}

export interface Usage {
  user: number;
  system: number;
  writes: number;
}

/** A process's user and system CPU-seconds and its write-type system calls (/proc/<pid>/io syscw), zeros once it is gone. */
export function usageOf(pid: number): Usage {
  try {
    const writes = /syscw:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
    return { ...cpuTimes(pid), writes: Number(writes?.[1] ?? 0) };
  } catch {
    return { user: 0, system: 0, writes: 0 };
  }
}

/** What a process used between two readings of usageOf. */
export const usageSince = (then: Usage, now: Usage): Usage => ({ user: now.user - then.user, system: now.system - then.system, writes: now.writes - then.writes });

/** Resident memory of a process in bytes. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/**
 * CPU-seconds of a process, its children that ended (cutime, cstime) and its live children:
 * PostgreSQL's postmaster and its backends, which come and go with the nodes' pools.
 */
export function cpuWithChildren(pid: number): number {
  let total = 0;
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    total = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK;
  } catch {
    return 0;
  }
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      if (Number(f[1]) === pid) total += (Number(f[11]) + Number(f[12])) / TICK;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** A PostgreSQL of the bench's own, with pg_stat_statements, and a Redis of its own. */
export class Backends {
  pgPid = 0;
  redisPid = 0;
  private redis: ChildProcess | null = null;
  private constructor(
    readonly dir: string,
    readonly pgPort: number,
    readonly redisPort: number,
  ) {}

  static async start(): Promise<Backends> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-capacity-'));
    const b = new Backends(dir, await freePort(), await freePort());
    const asPostgres = async (tool: string, args: string[]) => {
      const bin = fs.readdirSync('/usr/lib/postgresql').sort().reverse().map((m) => `/usr/lib/postgresql/${m}/bin/${tool}`).find((p) => fs.existsSync(p)) ?? tool;
      return process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', bin, ...args]) : run(bin, args);
    };
    if (process.getuid?.() === 0) await run('chown', ['postgres:postgres', dir]);
    const data = path.join(dir, 'data');
    await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    const options = `-p ${b.pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c max_connections=200`;
    await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start']);
    b.pgPid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const admin = new pg.Client({ connectionString: b.adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE svc');
    await admin.end();
    const inSvc = new pg.Client({ connectionString: b.databaseUrl });
    await inSvc.connect();
    await inSvc.query('CREATE EXTENSION pg_stat_statements');
    await inSvc.end();
    b.redis = spawn('redis-server', ['--port', String(b.redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    b.redisPid = b.redis.pid ?? 0;
    await sleep(300);
    return b;
  }

  /** Another database of this PostgreSQL (created empty): a second deployment beside `svc`. */
  async database(name: string): Promise<string> {
    const admin = new pg.Client({ connectionString: this.adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    return `postgres://postgres@127.0.0.1:${this.pgPort}/${name}`;
  }

  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.pgPort}/postgres`;
  }
  get databaseUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.pgPort}/svc`;
  }
  get redisUrl(): string {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  async remove(): Promise<void> {
    this.redis?.kill('SIGKILL');
    const bin = fs.readdirSync('/usr/lib/postgresql').sort().reverse().map((m) => `/usr/lib/postgresql/${m}/bin/pg_ctl`).find((p) => fs.existsSync(p)) ?? 'pg_ctl';
    const args = ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop'];
    await (process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', bin, ...args]) : run(bin, args)).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One RESP command to Redis on its own connection (INFO), answered as text. */
export function redisInfo(port: number, section: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString();
      const m = /^\$(\d+)\r\n/.exec(buf);
      if (m && Buffer.byteLength(buf) >= m[0].length + Number(m[1]) + 2) {
        s.end();
        const out: Record<string, string> = {};
        for (const line of buf.slice(m[0].length).split('\r\n')) {
          const i = line.indexOf(':');
          if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
        }
        resolve(out);
      }
    });
    s.on('error', reject);
    s.write(`*2\r\n$4\r\nINFO\r\n$${section.length}\r\n${section}\r\n`);
  });
}

/**
 * A compiled `svc serve` node. `root` is the tree whose build it runs: this one, or
 * BENCH_SVC_ROOT (a copy of another commit, built, with this tree's node_modules), so a bench can
 * measure the code before a change in the same run or beside it.
 */
export function startNode(port: number, env: Record<string, string>, root = process.env.BENCH_SVC_ROOT ?? ROOT): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=svc-compiled', 'packages/server/dist/main.js', 'serve'], {
      cwd: root,
      // BENCH_NODE_OPTIONS: V8 or Node flags for the nodes alone, not the bench's own process.
      env: {
        ...process.env,
        SVC_PORT: String(port),
        SVC_HOST: '127.0.0.1',
        SVC_DATA_DIR: BENCH_DATA,
        SVC_SIMULATOR: 'off',
        SVC_BOOTSTRAP_KEY: BENCH_KEY,
        SVC_LOG_LEVEL: 'warn',
        ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/svc is running/.test(out)) resolve(child);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`svc exited ${code}: ${out.slice(-2000)}`)));
  });
}

export async function reporterKeys(databaseUrl: string, dataDir = BENCH_DATA): Promise<string[]> {
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_SIMULATOR: 'off', SVC_DATABASE_URL: databaseUrl });
  const db = await openDb(config);
  try {
    const repo = new KeyRepo(db, config.env, keyPrefix(config.env));
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await repo.create({ name: `capacity reporter ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, new Date())).key);
    return keys;
  } finally {
    await db.close();
  }
}

/** Stream clients that count what they receive: score frames, and every message after the first. */
export class Subscribers {
  frames = 0;
  messages = 0;
  private readonly sockets: WebSocket[] = [];
  static async open(urls: string[], count: number): Promise<Subscribers> {
    const s = new Subscribers();
    for (let i = 0; i < count; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, (_, j) => {
          const ws = new WebSocket(`${urls[(i + j) % urls.length]}/v1/stream`, { headers: { authorization: `Bearer ${BENCH_KEY}` }, perMessageDeflate: false });
          s.sockets.push(ws);
          return new Promise<void>((resolve, reject) => {
            let ready = false;
            ws.on('message', (data: WebSocket.RawData) => {
              if (!ready) {
                ready = true;
                resolve();
                return;
              }
              s.messages += 1;
              if (String(data).includes('"tier"')) s.frames += 1;
            });
            ws.once('error', reject);
          });
        }),
      );
    }
    return s;
  }
  close(): void {
    for (const ws of this.sockets) ws.terminate();
  }
}

export async function until(what: string, check: () => boolean, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

