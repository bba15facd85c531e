import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority (raises the nice value) of every thread of this process but the
 * event loop's: V8's compiler and GC helpers, and any thread started before this call. The event
 * loop answers every request and writes every frame; on a small machine a helper woken on its
 * core used to take it for milliseconds in the middle of a request (docs/decisions.md "Event
 * loop first"). Threads started later by the event loop (libuv's pool) keep its priority, so the
 * file and DNS work it waits for is not slowed.
 *
 * Linux only (threads are listed in /proc and a thread id is a valid setpriority target); elsewhere,
 * or with `nice` 0, nothing changes. Returns the number of threads lowered.
 */
export function lowerHelperThreads(nice: number): number {
  if (nice === 0) return 0;
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const name of tids) {
    const tid = Number(name);
    if (!Number.isInteger(tid) || tid === process.pid) continue;
    try {
      os.setPriority(tid, nice);
      lowered += 1;
    } catch {
      // Gone meanwhile, or already lower than asked (raising needs privileges): leave it.
    }
  }
  return lowered;
}
