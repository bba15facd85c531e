// bench/stream: fan-out of svc's stream gateway against a bare `ws` broadcast and a Socket.IO
// broadcast, and report→provisional-frame latency. Subscribers live in separate client processes.
// Run: node --import tsx bench/stream.ts   (each run starts from a copy of the archive imported once into bench/.out/pristine)
// Knobs: BENCH_SUBSCRIBERS=1000,10000   BENCH_CLIENT_PROCS=4   BENCH_DELIVERIES=400000 (events per
//   run = this ÷ subscribers)   BENCH_RUNS=3 (measured runs per server, best kept)
//   BENCH_LATENCY_SAMPLES=500 (1 subscriber)   BENCH_LATENCY_SAMPLES_MANY=60 (n subscribers)
//   BENCH_LATENCY_WARM=3000   BENCH_LATENCY_SPACED_MS=250   BENCH_LATENCY_SPACED_SAMPLES=200 (the
//   1-subscriber windows: LATENCY_WINDOWS in stream-common.ts)
//   BENCH_SIO_CLIENT=on|off (row with the official socket.io-client)   BENCH_PROTOTYPE=on|off (row with
//   the coalesced-writes prototype in bench/stream-servers.ts)   BENCH_FANOUT=off (latency runs only)
//   BENCH_CPU_PROF=1 (V8 profiles of the server processes into bench/.out/prof; BENCH_CPU_PROF_INTERVAL=50 samples every 50 µs)
//   BENCH_SERVERS=bare,raw,socketio,harness,sse,coalesce,svc (which servers run; `sse` is the harness
//   with server-sent-event subscribers, its goal ≥ 0.8× the WebSocket harness)   BENCH_CLIENT=ws|lean (the
//   subscribers' client: the `ws` package, or the frame-header-only client in stream-clients.ts)
// Needs an open-files limit above the largest subscriber count (checked at start).
import os from 'node:os';
import { request } from 'undici';
import WebSocket from 'ws';
import { BENCH_KEY, fmt, resetBenchData, stop } from './lib.js';
import { reporterKeys } from './reporter-keys.js';
import { REPORT_KEYS, ReportPlan, todaysBuckets, type PlannedReport } from './today.js';
import { Child, cpuSeconds, cpuTimes, f64, latencyWindows, num, openFilesLimit, percentile, roundTripAgent, startSvcForBench, str, now } from './stream-common.js';

const SUBSCRIBERS = (process.env.BENCH_SUBSCRIBERS ?? '1000,10000').split(',').map(Number);
const CLIENT_PROCS = Number(process.env.BENCH_CLIENT_PROCS ?? 4);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 400_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LATENCY_SAMPLES_MANY = Number(process.env.BENCH_LATENCY_SAMPLES_MANY ?? 60);
const SIO_CLIENT = (process.env.BENCH_SIO_CLIENT ?? 'on') !== 'off';
const FANOUT = (process.env.BENCH_FANOUT ?? 'on') !== 'off';
const PROTOTYPE = (process.env.BENCH_PROTOTYPE ?? 'on') !== 'off';
const SERVERS = new Set((process.env.BENCH_SERVERS ?? 'bare,raw,socketio,harness,sse,coalesce,svc').split(','));
const HARNESS_LABEL = 'svc gateway, events from bus.publish (harness)';
const SSE_LABEL = 'svc gateway, server-sent events, events from bus.publish (harness)';
const RAW_LABEL = 'floor: pre-built frame, one socket.write per subscriber';
const CLIENT = process.env.BENCH_CLIENT === 'lean' ? 'lean' : 'ws';
const PROTOTYPE_LABEL = 'prototype (bench only, now the gateway design): ws + per-subscriber coalesced writes';
const POST_CONCURRENCY = 8;
const CONNECT_CONCURRENCY = 50;
const WARMUP_EVENTS = 5;
const PORT_BASE = 18200;
let nextPort = PORT_BASE;

const eventsFor = (n: number) => Math.max(20, Math.ceil(DELIVERIES / n));
/** Pause between latency samples: longer than one broadcast to n, so samples do not queue. */
const gapFor = (n: number) => Math.max(20, Math.ceil(n / 40));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const log = (line: string) => process.stderr.write(`[bench/stream] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// Subscribers: CLIENT_PROCS processes holding N / CLIENT_PROCS connections each.

interface Collected {
  /** Per client process: receive times, socket-major ([socket][event]), NaN when not received. */
  recvs: Float64Array[];
  total: number;
  expected: number;
  extra: number;
  closedEarly: number;
  closeCodes: string[];
}

class Subscribers {
  private constructor(private readonly procs: Child[]) {}

  static async start(n: number): Promise<Subscribers> {
    return new Subscribers(await Promise.all(Array.from({ length: n }, (_, i) => Child.start(`clients#${i}`, 'bench/stream-clients.ts'))));
  }

  async connect(protocol: 'svc' | 'bare' | 'eio' | 'sio' | 'sse', url: string, total: number): Promise<void> {
    const t0 = now();
    const share = (i: number) => Math.floor(total / this.procs.length) + (i < total % this.procs.length ? 1 : 0);
    const replies = await Promise.all(
      this.procs.map((p, i) => p.request({ op: 'connect', protocol, url, key: BENCH_KEY, count: share(i), concurrency: CONNECT_CONCURRENCY }, 'connected', 600_000)),
    );
    const ok = replies.reduce((s, r) => s + num(r, 'ok'), 0);
    const failed = replies.reduce((s, r) => s + num(r, 'failed'), 0);
    log(`  ${ok} ${protocol} subscribers connected in ${fmt((now() - t0) / 1000, 1)} s`);
    if (failed > 0) {
      const first = replies.map((r) => str(r, 'firstError')).find(Boolean);
      throw new Error(`${failed} of ${total} connections failed (first: ${first}); see the open-files limit and ephemeral ports`);
    }
  }

  /** CPU seconds used so far by all client processes together. */
  cpu(): number {
    return this.procs.reduce((s, p) => s + cpuSeconds(p.proc.pid), 0);
  }

  async arm(events: number): Promise<void> {
    await Promise.all(this.procs.map((p) => p.request({ op: 'arm', events }, 'armed')));
  }

  async collect(timeoutMs: number): Promise<Collected> {
    const replies = await Promise.all(this.procs.map((p) => p.request({ op: 'collect', timeoutMs }, 'result', timeoutMs + 60_000)));
    const sum = (f: string) => replies.reduce((s, r) => s + num(r, f), 0);
    return {
      recvs: replies.map((r) => f64(r, 'recv')),
      total: sum('total'),
      expected: sum('expected'),
      extra: sum('extra'),
      closedEarly: sum('closedEarly'),
      closeCodes: replies.map((r) => str(r, 'closeCodes')).filter((c) => c !== '[]'),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.request({ op: 'close' }, 'closed').catch(() => undefined)));
    await Promise.all(this.procs.map((p) => p.stop()));
  }
}

function lastReceive(c: Collected): number {
  let last = -Infinity;
  for (const r of c.recvs) for (const t of r) if (t > last) last = t;
  return last;
}

/** Latencies of every delivery of event k against sendTimes[k], sorted. */
function deliveryLatencies(c: Collected, sendTimes: Float64Array): Float64Array {
  const events = sendTimes.length;
  const out: number[] = [];
  for (const r of c.recvs) {
    for (let i = 0; i < r.length; i++) {
      const t = r[i];
      if (!Number.isNaN(t)) out.push(t - sendTimes[i % events]);
    }
  }
  return Float64Array.from(out).sort();
}

function checkComplete(what: string, c: Collected): void {
  if (c.total !== c.expected || c.closedEarly > 0) {
    throw new Error(`${what}: ${c.total} of ${c.expected} deliveries arrived, ${c.closedEarly} sockets closed early (${c.closeCodes.join(' ')})`);
  }
  if (c.extra > 0) log(`  warning: ${c.extra} unexpected extra event frames in ${what}`);
}

// ---------------------------------------------------------------------------------------------
// Fan-out runs: a warm-up, then RUNS measured runs of eventsFor(n) events; the best run is kept
// (the machine is shared: the best run is the one least disturbed), the others shown as the median.

interface FanOutResult {
  server: string;
  subscribers: number;
  events: number;
  deliveries: number;
  seconds: number;
  perSecond: number;
  /** deliveries/s of every measured run. */
  runs: number[];
  loadP50: number;
  loadP99: number;
  reqPerSecond?: number;
  /** CPU seconds of the server process and of the client processes during the kept run. */
  serverCpu: number;
  clientsCpu: number;
  /** 1-minute load average at the end of the kept run (the machine is shared). */
  load: number;
}

interface Published {
  /** When the first event was published or its POST sent. */
  t0: number;
  /** Per-event publish times, where the publisher reports them (delivery latency under load). */
  times?: Float64Array;
  reqPerSecond?: number;
}

async function measureRuns(label: string, n: number, subs: Subscribers, serverPid: number | undefined, publish: (count: number) => Promise<Published>): Promise<FanOutResult> {
  const events = eventsFor(n);
  const results: FanOutResult[] = [];
  for (const count of [WARMUP_EVENTS, ...Array.from({ length: RUNS }, () => events)]) {
    await subs.arm(count);
    const cpu0 = { server: cpuSeconds(serverPid), clients: subs.cpu() };
    const p = await publish(count);
    const c = await subs.collect(180_000);
    const cpu1 = { server: cpuSeconds(serverPid), clients: subs.cpu() };
    checkComplete(label, c);
    if (count === WARMUP_EVENTS) continue;
    const seconds = (lastReceive(c) - p.t0) / 1000;
    const lat = p.times ? deliveryLatencies(c, p.times) : new Float64Array(0);
    const r: FanOutResult = {
      server: label,
      subscribers: n,
      events,
      deliveries: c.total,
      seconds,
      perSecond: c.total / seconds,
      runs: [],
      loadP50: p.times ? percentile(lat, 50) : NaN,
      loadP99: p.times ? percentile(lat, 99) : NaN,
      reqPerSecond: p.reqPerSecond,
      serverCpu: cpu1.server - cpu0.server,
      clientsCpu: cpu1.clients - cpu0.clients,
      load: os.loadavg()[0],
    };
    log(
      `  ${fmt(r.perSecond)} deliveries/s (${fmt(seconds, 2)} s${r.reqPerSecond !== undefined ? `, ${fmt(r.reqPerSecond, 1)} req/s` : ''}; server ${fmt((r.serverCpu / r.deliveries) * 1e6, 1)} µs CPU per delivery; load ${fmt(r.load, 1)})`,
    );
    results.push(r);
  }
  const best = results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  return { ...best, runs: results.map((r) => r.perSecond) };
}

interface LatencyResult {
  path: string;
  subscribers: number;
  reports: number;
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  /** Server process CPU per event over the run, user and kernel (ms; 10 ms ticks over the whole run). */
  cpuPerEvent: { user: number; system: number };
}

/** Server CPU between two cpuTimes readings, per event, in ms. */
function perEvent(a: { user: number; system: number }, b: { user: number; system: number }, events: number) {
  return { user: ((b.user - a.user) / events) * 1000, system: ((b.system - a.system) / events) * 1000 };
}

function latencyOf(path: string, n: number, c: Collected, sent: Float64Array, cpuPerEvent: LatencyResult['cpuPerEvent']): LatencyResult {
  const lat = deliveryLatencies(c, sent);
  const r = { path, subscribers: n, reports: sent.length, deliveries: lat.length, p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat[lat.length - 1], cpuPerEvent };
  log(`  latency, ${n} subscribers, one event at a time: p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms; server CPU per event ${fmt(cpuPerEvent.user, 1)} ms user + ${fmt(cpuPerEvent.system, 1)} ms kernel`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Reference servers and the in-process harness: a child that publishes on request.

async function fanOutChild(
  label: string,
  mode: 'harness' | 'bare' | 'raw' | 'coalesce' | 'socketio',
  protocol: 'svc' | 'bare' | 'eio' | 'sio' | 'sse',
  n: number,
): Promise<{ fanout: FanOutResult | null; latency: LatencyResult }> {
  const port = nextPort++;
  log(`${label}, ${n} subscribers (port ${port})`);
  const server = await Child.start(mode, 'bench/stream-servers.ts', [mode, String(port)]);
  const subs = await Subscribers.start(CLIENT_PROCS);
  try {
    const url =
      mode === 'harness'
        ? `${protocol === 'sse' ? 'http' : 'ws'}://127.0.0.1:${port}/v1/stream`
        : protocol === 'eio'
          ? `ws://127.0.0.1:${port}/socket.io/?EIO=4&transport=websocket`
          : protocol === 'sio'
            ? `http://127.0.0.1:${port}`
            : `ws://127.0.0.1:${port}/`;
    await subs.connect(protocol, url, n);
    const seen = num(await server.request({ op: 'stats' }, 'stats'), 'connections');
    if (seen !== n) throw new Error(`${label}: server holds ${seen} connections, expected ${n}`);
    const fanout = FANOUT
      ? await measureRuns(label, n, subs, server.proc.pid, async (count) => {
          const times = f64(await server.request({ op: 'publish', events: count, gapMs: 0 }, 'published', 600_000), 'times');
          return { t0: times[0], times };
        })
      : null;
    // One event at a time to all n: the reference for svc's report → frame latency.
    await subs.arm(LATENCY_SAMPLES_MANY);
    const cpu0 = cpuTimes(server.proc.pid);
    const sent = f64(await server.request({ op: 'publish', events: LATENCY_SAMPLES_MANY, gapMs: gapFor(n) }, 'published', 600_000), 'times');
    const c = await subs.collect(180_000);
    const cpu = perEvent(cpu0, cpuTimes(server.proc.pid), LATENCY_SAMPLES_MANY);
    checkComplete(`${label} latency`, c);
    return { fanout, latency: latencyOf(`${label}: publish → frame`, n, c, sent, cpu) };
  } finally {
    await subs.close();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The real thing: `svc serve`, events made by POST /v1/reports. Each report opens a new candidate
// (→ one provisional event) that stays unconfirmed; candidates are retracted 90 s after their
// first report (an extra frame, and the reporter's weight falls), so every svc process used here
// takes reports for less than 90 s: fan-out and latency get a fresh process each.

async function postReport(base: string, report: PlannedReport): Promise<void> {
  // undici.request, not fetch: fetch's own overhead (~1 ms a call here) is the client's, not svc's.
  const res = await request(`${base}/v1/reports`, { dispatcher: roundTripAgent, method: 'POST', headers: { authorization: `Bearer ${report.key}`, 'content-type': 'application/json' }, body: report.body });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`POST /v1/reports: ${res.statusCode} ${text}`);
}

/** One subscriber, in this process: round trip from sending the POST to the frame's arrival, in the windows of LATENCY_WINDOWS. */
async function latencyOne(base: string, wsUrl: string, plan: ReportPlan, pid: number | undefined, spaced: boolean): Promise<LatencyResult[]> {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${BENCH_KEY}` }, perMessageDeflate: false });
  let onFrame: (() => void) | null = null;
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data: WebSocket.RawData) => {
      if (!Buffer.isBuffer(data)) return;
      if (data[2] === 0x69) onFrame?.(); // {"id": an event frame
      else resolve(); // subscribed
    });
    ws.once('error', reject);
  });
  const roundTrip = async (): Promise<number> => {
    const arrived = new Promise<number>((resolve) => {
      onFrame = () => resolve(now());
    });
    const t0 = now();
    await Promise.all([postReport(base, plan.next()), arrived]);
    return (await arrived) - t0;
  };
  const windows = await latencyWindows(roundTrip, spaced, () => {
    const cpu0 = cpuTimes(pid);
    return () => ({ cpu0, cpu1: cpuTimes(pid) });
  });
  ws.terminate();
  return windows.map(({ label, after, sorted, metered }) => {
    const cpuPerEvent = perEvent(metered.cpu0, metered.cpu1, sorted.length);
    const path = `${SVC_LATENCY}, reports ${fmt(after + 1)}–${fmt(after + sorted.length)} (${label})`;
    const r = { path, subscribers: 1, reports: sorted.length, deliveries: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1], cpuPerEvent };
    log(`  latency, 1 subscriber, ${label}: p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms; server CPU per report ${fmt(cpuPerEvent.user, 2)} ms user + ${fmt(cpuPerEvent.system, 2)} ms kernel`);
    return r;
  });
}

const SVC_LATENCY = 'svc: POST /v1/reports → provisional frame';

/** Runs `body` against a fresh `svc serve` with n subscribers connected (after `before`, if given). */
async function withSvc<T>(what: string, n: number, body: (ctx: { base: string; plan: ReportPlan; subs: Subscribers; pid: number | undefined }) => Promise<T>, before?: (base: string, wsUrl: string, plan: ReportPlan, pid: number | undefined) => Promise<void>): Promise<T> {
  const port = nextPort++;
  log(`svc serve: ${what}, ${n} subscribers (port ${port}); fresh copy of the archive`);
  await resetBenchData();
  const keys = await reporterKeys(REPORT_KEYS, 'bench stream reporter');
  const svc = await startSvcForBench(port);
  const base = `http://127.0.0.1:${port}`;
  const wsUrl = `ws://127.0.0.1:${port}/v1/stream`;
  let subs: Subscribers | null = null;
  try {
    const plan = new ReportPlan(await todaysBuckets(base), keys);
    let firstReport: number | null = null;
    if (before) {
      firstReport = now();
      await before(base, wsUrl, plan, svc.pid);
    }
    subs = await Subscribers.start(CLIENT_PROCS);
    await subs.connect('svc', wsUrl, n);
    firstReport ??= now();
    const result = await body({ base, plan, subs, pid: svc.pid });
    if (now() - firstReport > 85_000) log('  warning: this svc process took reports for over 85 s; retractions may have started (extra frames)');
    return result;
  } finally {
    await subs?.close();
    await stop(svc);
  }
}

function svcFanOut(n: number): Promise<FanOutResult> {
  return withSvc('fan-out of events made by POST /v1/reports', n, ({ base, plan, subs, pid }) =>
    measureRuns('svc gateway, events from POST /v1/reports', n, subs, pid, async (count) => {
      // E reports, POST_CONCURRENCY in flight, each making one provisional event.
      const bodies = Array.from({ length: count }, () => plan.next());
      let next = 0;
      const t0 = now();
      await Promise.all(
        Array.from({ length: Math.min(POST_CONCURRENCY, count) }, async () => {
          while (next < count) await postReport(base, bodies[next++]);
        }),
      );
      return { t0, reqPerSecond: count / ((now() - t0) / 1000) };
    }),
  );
}

async function svcLatency(n: number, withOne: boolean): Promise<LatencyResult[]> {
  const out: LatencyResult[] = [];
  const last = await withSvc(
    'report → provisional frame latency',
    n,
    async ({ base, plan, subs, pid }) => {
      // One report at a time, every delivery timed against its POST.
      await subs.arm(LATENCY_SAMPLES_MANY);
      const cpu0 = cpuTimes(pid);
      const sent = new Float64Array(LATENCY_SAMPLES_MANY);
      for (let k = 0; k < LATENCY_SAMPLES_MANY; k++) {
        sent[k] = now();
        await postReport(base, plan.next());
        await sleep(gapFor(n));
      }
      const c = await subs.collect(180_000);
      const cpu = perEvent(cpu0, cpuTimes(pid), LATENCY_SAMPLES_MANY);
      checkComplete('svc latency', c);
      return latencyOf(SVC_LATENCY, n, c, sent, cpu);
    },
    withOne
      ? async (base, wsUrl, plan, pid) => {
          // The spaced window only ahead of the 1-subscriber reference run: ahead of a fan-out run it would
          // keep this process taking reports past the 90 s after which retractions start.
          out.push(...(await latencyOne(base, wsUrl, plan, pid, n === 1)));
        }
      : undefined,
  );
  out.push(last);
  return out;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const limit = openFilesLimit();
  const most = Math.max(...SUBSCRIBERS);
  log(`open files limit ${limit ? `${limit.soft} (hard ${limit.hard})` : 'unknown'}; ${most} subscribers need ~${most + 200} in the server process and ~${Math.ceil(most / CLIENT_PROCS) + 200} per client process`);
  if (limit && limit.soft < most + 200) {
    throw new Error(`the open-files limit (${limit.soft}) is below what ${most} subscribers need: run 'ulimit -n ${Math.min(limit.hard, 65536)}' first (hard limit ${limit.hard})`);
  }
  await resetBenchData();
  const fanouts: FanOutResult[] = [];
  const latencies: LatencyResult[] = [];
  for (const [i, n] of SUBSCRIBERS.entries()) {
    const children: { label: string; mode: 'bare' | 'raw' | 'coalesce' | 'socketio' | 'harness'; protocol: 'bare' | 'eio' | 'sio' | 'svc' | 'sse' }[] = [
      { label: 'bare ws, pre-serialised frame', mode: 'bare', protocol: 'bare' },
      { label: RAW_LABEL, mode: 'raw', protocol: 'bare' },
      { label: 'Socket.IO io.emit (EIO-over-ws client)', mode: 'socketio', protocol: 'eio' },
      { label: 'Socket.IO io.emit (socket.io-client)', mode: 'socketio', protocol: 'sio' },
      { label: HARNESS_LABEL, mode: 'harness', protocol: 'svc' },
      { label: SSE_LABEL, mode: 'harness', protocol: 'sse' },
      { label: PROTOTYPE_LABEL, mode: 'coalesce', protocol: 'bare' },
    ];
    for (const { label, mode, protocol } of children.filter((c) => SERVERS.has(c.protocol === 'sse' ? 'sse' : c.mode) && (SIO_CLIENT || c.protocol !== 'sio') && (PROTOTYPE || c.mode !== 'coalesce'))) {
      const r = await fanOutChild(label, mode, protocol, n);
      if (r.fanout) fanouts.push(r.fanout);
      latencies.push(r.latency);
    }
    if (!SERVERS.has('svc')) continue;
    if (FANOUT) fanouts.push(await svcFanOut(n));
    latencies.push(...(await svcLatency(n, i === 0)));
  }

  const rows: string[] = [];
  const cpuRows: string[] = [];
  for (const n of SUBSCRIBERS) {
    const at = fanouts.filter((f) => f.subscribers === n);
    const bare = at.find((f) => f.server.startsWith('bare'));
    const sio = at.find((f) => f.server.includes('EIO-over-ws'));
    const wsHarness = at.find((f) => f.server === HARNESS_LABEL);
    const perCpu = (f: FanOutResult | undefined) => (f ? f.deliveries / f.serverCpu : NaN);
    for (const f of at) {
      const vsBare = bare ? f.perSecond / bare.perSecond : NaN;
      const vsSio = sio ? f.perSecond / sio.perSecond : NaN;
      const vsWs = wsHarness ? f.perSecond / wsHarness.perSecond : NaN;
      const goal = f.server === SSE_LABEL ? `≥ 0.8× the WebSocket (harness): ${fmt(vsWs, 2)}, ${vsWs >= 0.8 ? 'met' : 'NOT met'}` : f.server.startsWith('svc') ? `≥ 0.9× bare: ${vsBare >= 0.9 ? 'met' : 'NOT met'}; ≥ 2× Socket.IO: ${vsSio >= 2 ? 'met' : 'NOT met'}` : '';
      rows.push(
        `| ${fmt(n)} | ${f.server} | ${fmt(f.events)} | ${fmt(f.deliveries)} | ${fmt(f.seconds, 2)} | ${f.reqPerSecond !== undefined ? fmt(f.reqPerSecond, 1) : '–'} | **${fmt(f.perSecond)}** | ${fmt(median(f.runs))} | ${fmt(vsBare, 2)} | ${fmt(vsSio, 2)} | ${goal} |`,
      );
      const cpuVsBare = perCpu(f) / perCpu(bare);
      const cpuVsSio = perCpu(f) / perCpu(sio);
      const cpuVsWs = wsHarness ? perCpu(f) / perCpu(wsHarness) : NaN;
      const cpuGoal = f.server === SSE_LABEL ? `≥ 0.8× the WebSocket (harness): ${fmt(cpuVsWs, 2)}, ${cpuVsWs >= 0.8 ? 'met' : 'NOT met'}` : f.server.startsWith('svc') ? `≥ 0.9× bare: ${cpuVsBare >= 0.9 ? 'met' : 'NOT met'}; ≥ 2× Socket.IO: ${cpuVsSio >= 2 ? 'met' : 'NOT met'}` : '';
      cpuRows.push(
        `| ${fmt(n)} | ${f.server} | ${fmt(f.serverCpu, 2)} | ${fmt(f.clientsCpu, 2)} | ${fmt((f.serverCpu / f.deliveries) * 1e6, 2)} | **${fmt(perCpu(f))}** | ${fmt(cpuVsBare, 2)} | ${fmt(cpuVsSio, 2)} | ${Number.isNaN(f.loadP99) ? '–' : `${fmt(f.loadP50, 1)} / ${fmt(f.loadP99, 1)}`} | ${fmt(f.load, 1)} | ${cpuGoal} |`,
      );
    }
  }
  latencies.sort((a, b) => a.subscribers - b.subscribers); // stable: references first, svc last, per count
  // The goals are for svc's report → frame path with 1 and with the most subscribers; the other rows are references.
  const latRows = latencies.map((l) => {
    const goal = l.subscribers <= 1 ? 5 : l.subscribers >= 10_000 ? 100 : null;
    const verdict = l.path.startsWith('svc: POST') && goal !== null ? `≤ ${goal} ms: ${l.p99 <= goal ? 'met' : 'NOT met'}` : '(reference)';
    return `| ${fmt(l.subscribers)} | ${l.path} | ${fmt(l.reports)} | ${fmt(l.deliveries)} | ${fmt(l.p50, 2)} | **${fmt(l.p99, 2)}** | ${fmt(l.max, 2)} | ${fmt(l.cpuPerEvent.user, 2)} / ${fmt(l.cpuPerEvent.system, 2)} | ${verdict} |`;
  });
  const cpus = os.cpus();
  const out = [
    `bench/stream — ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, SQLite; subscribers in ${CLIENT_PROCS} client processes (${CLIENT === 'lean' ? 'lean frame-header clients' : 'ws clients, perMessageDeflate off'}) on the same machine; open files limit ${limit?.soft ?? '?'}`,
    '',
    `Fan-out: one event per event-loop turn to every subscriber; deliveries/s = deliveries ÷ (last frame received − first event published/POSTed); best of ${RUNS} runs (after a warm-up), median beside it; ratios from the best runs.`,
    '',
    '| subscribers | server | events | deliveries | s | req/s | deliveries/s (best) | median | × bare ws | × Socket.IO | goal |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'The same (best) runs per CPU second of the server process (/proc/<pid>/stat, 10 ms ticks): what one core of fan-out buys, independent of the client processes and of other load sharing the 2 cores.',
    '',
    '| subscribers | server | server CPU s | client processes CPU s | server CPU µs per delivery | deliveries per server CPU-second | × bare ws | × Socket.IO | publish → frame p50 / p99 ms | 1-min load avg | goal, per CPU-second |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...cpuRows,
    '',
    'Latency, one event at a time: for svc, POST /v1/reports sent → provisional frame received (1 subscriber: round trip in one process; n subscribers: every delivery timed, CLOCK_MONOTONIC shared by the processes); for the references, publish call → frame received.',
    '',
    '| subscribers | path | events | deliveries timed | p50 ms | p99 ms | max ms | server CPU per event, user / kernel ms | goal |',
    '|---|---|---|---|---|---|---|---|---|',
    ...latRows,
  ].join('\n');
  process.stdout.write(`${out}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
