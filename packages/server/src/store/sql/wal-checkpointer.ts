import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** When the checkpointer runs: see WalCheckpointer. */
export interface CheckpointPolicy {
  /** How often the thread looks at the WAL. */
  pollMs: number;
  /** Checkpoint once this many frames wait in the WAL (SQLite's own automatic threshold is 1,000). */
  frames: number;
  /** Checkpoint frames that waited this long, however few. */
  maxWaitMs: number;
  /** Past this many frames in the WAL, ask the writer to finish the checkpoint itself (see catch-up below). */
  catchUpFrames: number;
  /** 0: unchanged; else the thread lowers its own priority to this nice value (helper-threads.ts). */
  nice: number;
}

export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = { pollMs: 250, frames: 1000, maxWaitMs: 30_000, catchUpFrames: 2048, nice: 0 };

/**
 * Checkpoints a SQLite WAL from a worker thread with its own connection.
 *
 * SQLite's automatic checkpoint runs inside whichever commit crosses the threshold: that commit
 * copies ~1,000 pages into the database file and fsyncs twice, several milliseconds with the
 * event loop blocked. That is the tail of report → frame latency. The main connection turns
 * auto-checkpointing off and this thread runs PASSIVE checkpoints (they never block writers or
 * readers), so the WAL stays small without any commit copying pages.
 *
 * A completed checkpoint still costs the next commit one fsync: that commit starts the WAL over
 * and SQLite syncs the new WAL header before its first frame (0.5–4 ms on the benchmark VM, on
 * the event loop). So the thread does not checkpoint on a clock but by size: once `frames` wait
 * (read from the WAL-index file; docs/operations.md "One process"), or when frames have waited
 * `maxWaitMs`. Reports then pay one restart per ~80 (1,000 frames), or per 30 s when they come
 * slower than that, instead of one each whenever they are more than a poll apart.
 *
 * Catch-up: the WAL starts over only when a writer begins while every frame is checkpointed. A
 * writer that never pauses (reports at full speed) commits while each background checkpoint
 * runs, so that moment never comes and the WAL grows by the write rate (350 MB in 8 s measured).
 * Once the WAL holds `catchUpFrames`, the thread asks the writer's thread (`catchUp`) to
 * checkpoint the few frames written since its own last pass, on the writer's connection between
 * two writes: then every frame is in, and the next commit starts the WAL over (and cuts the file
 * back to its size limit, store/sql/db.ts). That costs the event loop the copy of those frames and two
 * fsyncs, once per ~8 MB written (docs/operations.md, "One process").
 */
export class WalCheckpointer {
  private constructor(private readonly worker: Worker) {}

  static start(file: string, policy: Partial<CheckpointPolicy> = {}, catchUp: () => void = () => undefined): WalCheckpointer {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, ...DEFAULT_CHECKPOINT_POLICY, ...policy },
    });
    // A failing checkpointer leaves the WAL growing until the next start; it must not crash the service.
    worker.on('error', () => undefined);
    worker.on('message', (m: unknown) => {
      if (m === 'catch-up') catchUp();
    });
    worker.unref();
    return new WalCheckpointer(worker);
  }

  /** Lets a checkpoint in progress finish, then closes the thread's connection. */
  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Held while it stops: an unref'd thread lets a process with nothing else left (a start
    // refused after the database opened) exit silently, with code 0, before 'exit' fires.
    this.worker.ref();
    this.worker.postMessage('stop');
    await exited;
  }
}

// Plain CommonJS so it runs the same under tsx, vitest and plain node.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
if (workerData.nice) {
  // Linux names the calling thread in /proc/thread-self; elsewhere the thread keeps its priority.
  try { require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), workerData.nice); } catch { /* not Linux */ }
}
const db = new SQLite(workerData.file);
// The WAL-index file (https://www.sqlite.org/walformat.html, section 2), in host byte order: its
// header's version (3007000) at 0 and mxFrame (the last frame in the WAL) at 16, and the
// checkpoint info's nBackfill (frames already copied into the database) at 96. Read without a
// lock: a torn read only moves one decision by one poll. Anything unexpected falls back to
// checkpointing every poll.
const fs = require('node:fs');
const le = require('node:os').endianness() === 'LE';
const header = Buffer.alloc(100);
let shm = null;
const waitingFrames = () => {
  try {
    shm ??= fs.openSync(workerData.file + '-shm', 'r');
    if (fs.readSync(shm, header, 0, 100, 0) < 100) return null;
    const u32 = (at) => (le ? header.readUInt32LE(at) : header.readUInt32BE(at));
    if (u32(0) !== 3007000) return null;
    return { inWal: u32(16), waiting: Math.max(0, u32(16) - u32(96)) };
  } catch {
    return null;
  }
};
let waitingSince = null;
// Asked once the thread's own pass is done, so the writer's pass has only the newest frames to copy.
const catchUpIfLarge = () => {
  const wal = waitingFrames();
  if (wal !== null && wal.inWal >= workerData.catchUpFrames) parentPort.postMessage('catch-up');
};
const timer = setInterval(() => {
  const wal = waitingFrames();
  const waiting = wal === null ? null : wal.waiting;
  const now = Date.now();
  if (waiting === 0) {
    waitingSince = null;
    catchUpIfLarge();
    return;
  }
  waitingSince ??= now;
  if (waiting !== null && waiting < workerData.frames && now - waitingSince < workerData.maxWaitMs) return catchUpIfLarge();
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    waitingSince = null;
  } catch { /* busy or closing: the next poll retries */ }
  catchUpIfLarge();
}, workerData.pollMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  if (shm !== null) fs.closeSync(shm);
  db.close();
  parentPort.close();
});
`;
