import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { loadConfig, ConfigError } from '../src/config.js';
import { WalCheckpointer } from '../src/store/sql/wal-checkpointer.js';
import { seededDataDir, serveSvc, type SvcProcess } from './process.js';

/** Nice value of each thread of a process, by thread id (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceOf(pid: number | 'self'): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

// Threads, their ids and their nice values are Linux's /proc; svc changes nothing elsewhere.
const linux = process.platform === 'linux';

describe.runIf(linux)('event loop first: helper threads of svc serve run below the event loop', () => {
  const running: SvcProcess[] = [];
  let svc: SvcProcess;
  let plain: SvcProcess;
  beforeAll(async () => {
    // Data dirs holding the run's imported archive: an import of its own per process took a
    // minute and more on a busy two-vCPU machine.
    const started = await Promise.allSettled([serveSvc(seededDataDir(), { SVC_HELPER_THREAD_NICE: '19' }), serveSvc(seededDataDir(), {})]);
    for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    [svc, plain] = running as [SvcProcess, SvcProcess];
  }, 120_000);
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
  });

  it('lowers every thread but the event loop to the nice value asked for, the WAL checkpointer included', async () => {
    const res = await fetch(`${svc.base}/healthz`);
    expect(res.status).toBe(200);
    const nice = niceOf(svc.pid);
    // The event loop keeps what it inherited (a runner started under `nice` passes its value on).
    expect(nice.get(svc.pid)).toBe(niceOf('self').get(process.pid));
    const helpers = [...nice].filter(([tid]) => tid !== svc.pid);
    // V8's four platform workers and the checkpointer at the least; threads the event loop
    // starts later (libuv's pool, where Node starts it lazily) keep the event loop's value.
    expect(helpers.filter(([, n]) => n === 19).length).toBeGreaterThanOrEqual(5);
    expect(helpers.filter(([, n]) => n !== 19 && n !== nice.get(svc.pid))).toEqual([]);
  });

  it('leaves every thread alone by default', () => {
    const nice = niceOf(plain.pid);
    expect(nice.size).toBeGreaterThanOrEqual(7);
    const inherited = nice.get(plain.pid);
    expect([...nice].filter(([, n]) => n !== inherited)).toEqual([]);
  });
});

describe.runIf(linux)('WalCheckpointer', () => {
  it('gives its own thread the nice value it is started with, and none without one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ckpt-'));
    const file = path.join(dir, 'x.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const own = niceOf('self').get(process.pid);
    const threadsOf = async (nice: number) => {
      const before = new Set(niceOf('self').keys());
      const ckpt = WalCheckpointer.start(file, { pollMs: 50, nice });
      // The thread lowers itself as it starts; give it a moment to run its first lines.
      let added: number[] = [];
      for (let i = 0; i < 100; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const now = niceOf('self');
        added = [...now].filter(([tid, n]) => !before.has(tid) && n === nice && nice !== 0).map(([tid]) => tid);
        if (nice === 0 || added.length > 0) break;
      }
      const after = niceOf('self');
      await ckpt.stop();
      return { added, lowered: [...after].filter(([tid, n]) => !before.has(tid) && n !== own).length };
    };
    try {
      const lowered = await threadsOf(12);
      expect(lowered.added.length).toBe(1);
      const untouched = await threadsOf(0);
      expect(untouched.lowered).toBe(0);
      // This process's own thread kept its priority.
      expect(niceOf('self').get(process.pid)).toBe(own);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SVC_HELPER_THREAD_NICE', () => {
  it('is 0 (off) unless set, and anything outside 0..19 is refused in one line', () => {
    expect(loadConfig({}).helperThreadNice).toBe(0);
    expect(loadConfig({ SVC_HELPER_THREAD_NICE: '19' }).helperThreadNice).toBe(19);
    expect(loadConfig({ SVC_HELPER_THREAD_NICE: '0' }).helperThreadNice).toBe(0);
    expect(loadConfig({ SVC_HELPER_THREAD_NICE: '7' }).helperThreadNice).toBe(7);
    for (const bad of ['-1', '20', 'high', '1.5']) {
      expect(() => loadConfig({ SVC_HELPER_THREAD_NICE: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SVC_HELPER_THREAD_NICE: bad })).toThrow(/^SVC_HELPER_THREAD_NICE must be an integer between 0 and 19, got '.*'$/);
    }
  });
});
