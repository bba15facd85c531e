import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority (raises the nice value) of every thread of this process but the
 * event loop's: V8's compiler and GC helpers, and libuv's pool where it already runs (Node 20
 * starts it to load ES modules; Node 24 starts it later, from the event loop, whose priority it
 * then keeps). The event loop answers every request and writes every
 * frame; on a small machine a helper woken on its core can take it for milliseconds in the middle
 * of a request. Lowered helpers lose when the machine is saturated, which is why this is a
 * setting (docs/decisions.md "Event loop first").
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
