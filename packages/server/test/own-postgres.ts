import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freshDb } from './helpers.js';
import { freePort } from './process.js';

const run = promisify(execFile);

/**
 * A server tool by name: on PATH, else in the newest of Debian's /usr/lib/postgresql/<major>/bin,
 * which is not on PATH unless the machine links it there.
 */
function pgTool(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && fs.existsSync(path.join(dir, name))) return name;
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root) ? fs.readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const major of majors) {
    const candidate = path.join(root, major, 'bin', name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return name;
}

/** PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user. */
const asPostgres = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', pgTool(command), ...args]) : run(pgTool(command), args);

/**
 * A PostgreSQL cluster of the test's own (initdb + pg_ctl) on a free port and in a temporary
 * directory, so a test can stop and start it without touching the machine's server that every
 * other test shares.
 */
export class OwnPostgres {
  private running = false;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<OwnPostgres> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-own-pg-'));
    if (process.getuid?.() === 0) fs.chownSync(dir, ...postgresIds());
    const own = new OwnPostgres(dir, await freePort());
    await asPostgres('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await own.resume();
    return own;
  }

  /** A database of this cluster (created on first use). */
  async url(database = 'svc'): Promise<string> {
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${this.port}/postgres` });
    await admin.connect();
    try {
      const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * A database of this cluster holding the run's imported archive (created on first use), as a
   * node that imported it at its first start leaves it: restored from a dump of a copy of the
   * run's PostgreSQL template (`pg_dump | psql`, a few seconds) rather than imported by `svc
   * serve` (about 20 s and 10 CPU-seconds on two vCPUs, docs/testing.md "What makes it fast").
   * The copy, not the template itself: a session on the template would make every other test
   * file's `CREATE DATABASE … TEMPLATE` fail while it lasts.
   */
  async seeded(database = 'svc'): Promise<string> {
    const url = await this.url(database);
    const source = await freshDb('postgres');
    await source.db.close();
    if (!source.databaseUrl) throw new Error('freshDb gave no PostgreSQL URL');
    await run('bash', ['-o', 'pipefail', '-c', `"$0" --no-owner --no-privileges "$1" | "$2" -q -v ON_ERROR_STOP=1 -d "$3" >/dev/null`, pgTool('pg_dump'), source.databaseUrl, pgTool('psql'), url], { maxBuffer: 1 << 20 });
    return url;
  }

  /** Starts (again) on the same port and data and waits until it takes connections. */
  async resume(): Promise<void> {
    if (this.running) return;
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB`;
    await asPostgres('pg_ctl', ['-D', path.join(this.dir, 'data'), '-o', options, '-l', path.join(this.dir, 'log'), '-w', '-t', '60', 'start']);
    this.running = true;
  }

  /** A fast shutdown: sessions are ended (57P01) and new connections refused, as in a restart. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await asPostgres('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /**
   * A streaming replica of this cluster (`pg_basebackup -R`: it follows the primary as a hot
   * standby, read only), started on a port of its own. `--checkpoint=fast`: the default spread
   * checkpoint paces its writes over most of checkpoint_timeout, and took 95 s here.
   */
  async replica(): Promise<OwnPostgres> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-own-pg-replica-'));
    if (process.getuid?.() === 0) fs.chownSync(dir, ...postgresIds());
    const replica = new OwnPostgres(dir, await freePort());
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-D', path.join(dir, 'data'), '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast']);
    await replica.resume();
    return replica;
  }

  /** A standby becomes a primary (`pg_ctl promote`), as a managed database's failover does. */
  async promote(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', path.join(this.dir, 'data'), '-w', '-t', '60', 'promote']);
  }

  /**
   * SIGSTOP (or SIGCONT) to the cluster's postmaster and every process under it: alive but not
   * answering, as in an I/O stall or a host that froze. Only this cluster's processes. The
   * postmaster is stopped first and continued last, so it starts no process after the listing; a
   * session's process may still end on its own between the listing and its signal, and is skipped.
   */
  async freeze(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const postmaster = this.postmasterPid();
    if (signal === 'SIGSTOP') process.kill(postmaster, signal);
    for (const pid of await this.childPids()) {
      try {
        process.kill(pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    if (signal === 'SIGCONT') process.kill(postmaster, signal);
  }

  /** The cluster's postmaster, from its pid file. */
  postmasterPid(): number {
    return Number(fs.readFileSync(path.join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** The processes the postmaster has started, as they are now (none when it has none). */
  async childPids(): Promise<number[]> {
    return run('pgrep', ['-P', String(this.postmasterPid())]).then(
      (r) => r.stdout.split('\n').filter(Boolean).map(Number),
      () => [],
    );
  }

  async remove(): Promise<void> {
    await this.stop().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function postgresIds(): [number, number] {
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('no postgres user on this machine: PostgreSQL refuses to run as root');
  return [Number(uid), Number(gid)];
}
