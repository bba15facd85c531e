import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Checkpoints a SQLite WAL from a worker thread with its own connection.
 *
 * SQLite's automatic checkpoint runs inside whichever commit crosses the threshold: that commit
 * copies ~1,000 pages into the database file and fsyncs twice, several milliseconds with the
 * event loop blocked. That is the tail of report → frame latency. The main connection turns
 * auto-checkpointing off and this thread runs PASSIVE checkpoints (they never block writers or
 * readers) every `intervalMs`, so the WAL stays small without any request paying for it.
 */
export class WalCheckpointer {
  private constructor(private readonly worker: Worker) {}

  /** `nice` (0: unchanged) lowers the thread's own priority below the event loop's (helper-threads.ts). */
  static start(file: string, intervalMs: number, nice = 0): WalCheckpointer {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs, nice },
    });
    // A failing checkpointer leaves the WAL growing until the next start; it must not crash the service.
    worker.on('error', () => undefined);
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
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: the next tick retries */ }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;
