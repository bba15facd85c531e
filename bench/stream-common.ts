// Shared by bench/stream.ts and its child processes: the clock, IPC plumbing and the sample event.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { EVENT_SCHEMA, eventId, type Event } from '@svc/schema';
import { Agent } from 'undici';
import type { StoredEvent } from '@svc/server';
import { ROOT, startSvc } from './lib.js';

/**
 * Milliseconds on CLOCK_MONOTONIC (process.hrtime reads it through libuv). On Linux that clock is
 * one system-wide clock, so timestamps taken in different processes on this machine compare
 * directly, with sub-microsecond resolution and no wall-clock steps.
 */
export function now(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

/**
 * The HTTP client of every timed round trip: an Agent of the project's undici, never undici's
 * global dispatcher. That one lives on `globalThis`, shared with the undici bundled in Node; on
 * Node 24 an ESM import of `node:http` reads its lazy `WebSocket` export, which installs the
 * bundled copy's Agent there, and that copy held every request on a reused connection for a
 * 1 ms timer (bench/RESULTS.md, "Node 24: the floor's client").
 */
export const roundTripAgent = new Agent();

export interface Msg {
  op: string;
  [field: string]: unknown;
}

export function isMsg(m: unknown): m is Msg {
  return typeof m === 'object' && m !== null && 'op' in m && typeof m.op === 'string';
}

export function num(m: Msg, field: string): number {
  const v = m[field];
  if (typeof v !== 'number') throw new Error(`IPC '${m.op}': '${field}' is not a number`);
  return v;
}

export function str(m: Msg, field: string): string {
  const v = m[field];
  if (typeof v !== 'string') throw new Error(`IPC '${m.op}': '${field}' is not a string`);
  return v;
}

export function f64(m: Msg, field: string): Float64Array {
  const v = m[field];
  if (!(v instanceof Float64Array)) throw new Error(`IPC '${m.op}': '${field}' is not a Float64Array`);
  return v;
}

/** Sends to the parent (children only). */
export function toParent(msg: Msg): void {
  if (!process.send) throw new Error('not started with an IPC channel');
  process.send(msg);
}

/** Calls `handler` for each message from the parent; a thrown error is reported as {op:'error'}. */
export function onParent(handler: (m: Msg) => void | Promise<void>): void {
  process.on('message', (m: unknown) => {
    if (!isMsg(m)) return;
    Promise.resolve()
      .then(() => handler(m))
      .catch((e: unknown) => toParent({ op: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) }));
  });
  // The parent going away ends the child (no orphans holding thousands of sockets).
  process.on('disconnect', () => process.exit(0));
}

/** A child process speaking request/reply over IPC (structured clone, so typed arrays travel whole). */
export class Child {
  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {}

  static async start(name: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<Child> {
    const proc = fork(path.join(ROOT, script), args, {
      cwd: ROOT,
      execArgv: ['--import', 'tsx', ...(name.startsWith('clients') ? [] : cpuProfArgs())],
      env: { ...process.env, ...env },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const child = new Child(name, proc);
    await child.next('ready', 120_000);
    return child;
  }

  send(msg: Msg): void {
    this.proc.send(msg);
  }

  /** Resolves with the next message whose op is `op`; rejects on {op:'error'}, exit or timeout. */
  next(op: string, timeoutMs: number): Promise<Msg> {
    return new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.proc.off('message', onMessage);
        this.proc.off('exit', onExit);
        fn();
      };
      const onMessage = (m: unknown) => {
        if (!isMsg(m)) return;
        if (m.op === op) done(() => resolve(m));
        else if (m.op === 'error') done(() => reject(new Error(`${this.name}: ${String(m.message)}`)));
      };
      const onExit = (code: number | null) => done(() => reject(new Error(`${this.name} exited (${code}) while waiting for '${op}'`)));
      const timer = setTimeout(() => done(() => reject(new Error(`${this.name}: no '${op}' within ${timeoutMs} ms`))), timeoutMs);
      this.proc.on('message', onMessage);
      this.proc.once('exit', onExit);
    });
  }

  async request(msg: Msg, replyOp: string, timeoutMs = 120_000): Promise<Msg> {
    const reply = this.next(replyOp, timeoutMs);
    this.send(msg);
    return reply;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      this.proc.once('exit', () => resolve());
      this.proc.kill('SIGTERM');
    });
  }
}

/** A synthetic provisional event shaped exactly like the ones ingestion appends. */
export function syntheticEvent(seq: number, tsMs: number): StoredEvent {
  const event: Event = {
    id: eventId(seq),
    type: 'score',
    tier: 'provisional',
    game_id: 'soccer_900001',
    sport: 'soccer',
    league: 'wc',
    team: 'BRA',
    event_type: 'goal',
    points: 1,
    clock: "67'",
    ts: new Date(tsMs).toISOString(),
    confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: 1 },
    schema: EVENT_SCHEMA,
  };
  return { seq, competitionId: 'soccer_wc_900001', seasonId: 'wc-2026', sport: 'soccer', league: 'wc', ownerKeyId: null, event };
}

/** Open-files limit of this process (children inherit it), from /proc; null where unavailable. */
export function openFilesLimit(): { soft: number; hard: number } | null {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const m = line ? /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(line) : null;
    if (!m) return null;
    const n = (s: string) => (s === 'unlimited' ? Infinity : Number(s));
    return { soft: n(m[1]), hard: n(m[2]) };
  } catch {
    return null;
  }
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * The windows of the 1-subscriber report → frame latency, the same for bench/stream.ts (svc) and
 * bench/stream-latency-floor.ts, each run in one process: SAMPLES round trips after WARMUP (a
 * server just started) and after WARM (a server in service), then SPACED_SAMPLES round trips
 * SPACED_MS apart. TurboFan is still compiling svc's request path for the first ~3,000 reports
 * (`--trace-opt`: 15–20 functions a second until then, on helper threads that share the two cores
 * with the event loop and the client), so the first window measures the JIT as much as svc. 5 ms
 * apart, every report finds the process, its caches and the WAL warm from the one before; a
 * game's reports come seconds apart.
 */
export const LATENCY_WINDOWS = {
  samples: Number(process.env.BENCH_LATENCY_SAMPLES ?? 500),
  warmup: 100,
  warm: Number(process.env.BENCH_LATENCY_WARM ?? 3000),
  spacedMs: Number(process.env.BENCH_LATENCY_SPACED_MS ?? 250),
  spacedSamples: Number(process.env.BENCH_LATENCY_SPACED_SAMPLES ?? 200),
};

export interface LatencyWindow<M> {
  label: string;
  /** Round trips before the window's first. */
  after: number;
  pauseMs: number;
  /** The window's round trips in ms, sorted. */
  sorted: Float64Array;
  /** What `meter` returned for the window. */
  metered: M;
}

/**
 * Runs `roundTrip` (one report sent → its frame received, in ms) through LATENCY_WINDOWS, 5 ms
 * apart outside the spaced window. `meter` is called as each window starts; the function it
 * returns, as it ends. `spaced: false` leaves the spaced window out.
 */
export async function latencyWindows<M>(roundTrip: () => Promise<number>, spaced: boolean, meter: () => () => M): Promise<LatencyWindow<M>[]> {
  const w = LATENCY_WINDOWS;
  let sent = 0;
  const trip = async (pauseMs: number): Promise<number> => {
    const ms = await roundTrip();
    sent++;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    return ms;
  };
  const window = async (label: string, after: number, samples: number, pauseMs: number): Promise<LatencyWindow<M>> => {
    while (sent < after) await trip(5);
    const done = meter();
    const sorted = new Float64Array(samples);
    for (let i = 0; i < samples; i++) sorted[i] = await trip(pauseMs);
    const metered = done();
    sorted.sort();
    return { label, after, pauseMs, sorted, metered };
  };
  const out = [await window('just started', w.warmup, w.samples, 5)];
  if (w.warm >= sent) out.push(await window('in service', w.warm, w.samples, 5));
  if (spaced && w.spacedMs > 0) out.push(await window(`in service, ${w.spacedMs} ms apart`, sent, w.spacedSamples, w.spacedMs));
  return out;
}

export const PROF_DIR = path.join(ROOT, 'bench/.out/prof');

/** --cpu-prof flags for BENCH_CPU_PROF; BENCH_CPU_PROF_INTERVAL (µs, default V8's 1000) samples finer. */
export function cpuProfArgs(): string[] {
  if (!process.env.BENCH_CPU_PROF) return [];
  const interval = process.env.BENCH_CPU_PROF_INTERVAL;
  return ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, ...(interval ? [`--cpu-prof-interval=${Number(interval)}`] : [])];
}

/** startSvc, or with BENCH_CPU_PROF set the same `svc serve` under --cpu-prof (profile written on stop). */
export function startSvcForBench(port: number): Promise<ChildProcess> {
  return startSvc(port, {}, cpuProfArgs());
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; NaN where unavailable. */
export function cpuSeconds(pid: number | undefined): number {
  const t = cpuTimes(pid);
  return t.user + t.system;
}

/** CPU seconds a process has spent in user space and in the kernel so far; NaN where unavailable. */
export function cpuTimes(pid: number | undefined): { user: number; system: number } {
  if (pid === undefined) return { user: NaN, system: NaN };
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name start at field 3 (state); utime is 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(rest[11]) / CLOCK_TICKS, system: Number(rest[12]) / CLOCK_TICKS };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/** USER_HZ: 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;
