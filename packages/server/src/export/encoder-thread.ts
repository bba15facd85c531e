import { availableParallelism } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CsvEncoder } from './csv.ts';
import { PARQUET_ROW_GROUP, ParquetFile, RowGroupEncoder, type EncodedRowGroup } from './parquet.ts';
import { parseLines, type Column } from './records.ts';

/**
 * CSV and Parquet exports encoded in threads of their own (docs/decisions.md "Export formats").
 * The export's thread reads pages and writes their NDJSON; parsing those lines again and encoding
 * them (more than half of a Parquet export's CPU, about half of a CSV's) would be serial with it on
 * the event loop, holding it for tens of milliseconds a Parquet row group. Here the NDJSON bytes go
 * to workers of this module, which parse and encode while the export's thread makes the next
 * pages, and the encoded bytes come back: the parts run side by side, and the event loop that
 * serves the live feed holds none of the encoding.
 *
 * - CSV: one thread, the export's NDJSON streamed through it (CsvThread).
 * - Parquet, whose encoding costs twice the NDJSON's making: row groups are encoded apart, in up
 *   to PARQUET_THREADS threads, and put together in order on the export's side (ParquetThreads;
 *   parquet.ts ParquetFile), the same bytes as one thread's.
 *
 * Node runs this file in the thread as it is (its types stripped; see records.ts): the module is
 * the workers' entry, told apart by their `workerData`.
 */

/** Marks the workers' data, so that no other worker that loads this module starts encoding. */
const ROLE = 'svc-export-encoder';

/** NDJSON chunks handed to the CSV thread and not yet encoded before the export's side waits: two keep both threads busy. */
const CSV_IN_FLIGHT = 2;

/** Threads encoding one Parquet export's row groups: two, or one on a single core. */
const PARQUET_THREADS = Math.max(1, Math.min(2, availableParallelism()));

/** Row groups handed to each Parquet thread and not yet back before the export's side waits. */
const PARQUET_IN_FLIGHT_PER_THREAD = 2;

/**
 * How long a Parquet thread is kept once its export has ended, for the next Parquet export of the
 * same columns to take. A new thread's first groups cost it two to three times its later ones
 * (its code compiled and optimised again, by V8's helper threads too, its heap grown): V8's
 * helpers alone spent about 1.5 CPU-seconds on a new pair over a 1M-event export, 0.4 on a
 * kept pair (bench/history/2026-11-29.md "Export formats: Parquet's ids as bytes, its threads kept"). A
 * kept thread is idle and holds its heap (tens of MB) until then; it keeps no process alive.
 */
const PARQUET_KEEP_MS = 10_000;

/**
 * Each thread's heap: the old generation capped at 256 MB, so that a runaway thread fails its
 * export, not the node (the process's own heap limit does not reach a thread started with limits
 * of its own). The young generation is V8's: capping it at 16 MB cut the process's peak on a
 * 1M-event Parquet export by a fifth but Parquet's throughput by a quarter, in collections
 * (bench/history/2026-11-29.md "Export formats: row groups in two threads").
 */
const THREAD_HEAP = { maxOldGenerationSizeMb: 256 };

interface ThreadData {
  role: typeof ROLE;
  /** `csv`: an NDJSON stream in, CSV bytes out. `parquet`: one row group's NDJSON lines in, that group encoded out. */
  mode: 'csv' | 'parquet';
  columns: readonly Column[];
}

/** What the CSV thread sends back: encoded bytes, a chunk encoded, or the file complete. */
type FromCsvThread = Uint8Array | 'encoded' | 'finished';

interface GroupLines {
  index: number;
  lines: Uint8Array<ArrayBuffer>;
}

interface GroupEncoded {
  index: number;
  /** Null for lines that held no record (blank space at the end of the export). */
  group: EncodedRowGroup | null;
}

/** A copy of `bytes` in an ArrayBuffer of its own, to transfer rather than clone with whatever buffer it is a view of. */
function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

function startThread(mode: ThreadData['mode'], columns: readonly Column[]): Worker {
  const data: ThreadData = { role: ROLE, mode, columns };
  // None of the process's flags: a thread would otherwise load whatever it was started with (a
  // TypeScript loader in development, several MB and tens of milliseconds a thread) for modules
  // that need none of it. The heap limit is V8's, shared by every thread all the same.
  return new Worker(new URL(import.meta.url), { workerData: data, execArgv: [], resourceLimits: THREAD_HEAP });
}

interface KeptThread {
  worker: Worker;
  timer: NodeJS.Timeout;
  /** Forgets the thread: it ended, or it is taken. */
  forget: () => void;
}

/** Idle Parquet threads by the columns they encode (as JSON), at most PARQUET_THREADS of each. */
const keptThreads = new Map<string, KeptThread[]>();

/** Keeps a Parquet thread whose export has ended (none of its groups still out) for PARQUET_KEEP_MS. */
function keepThread(key: string, worker: Worker): void {
  const list = keptThreads.get(key) ?? [];
  if (list.length >= PARQUET_THREADS) {
    void worker.terminate();
    return;
  }
  const kept: KeptThread = {
    worker,
    timer: setTimeout(() => {
      kept.forget();
      void worker.terminate();
    }, PARQUET_KEEP_MS),
    forget: () => {
      clearTimeout(kept.timer);
      worker.off('exit', kept.forget);
      worker.off('error', kept.forget);
      const at = list.indexOf(kept);
      if (at !== -1) list.splice(at, 1);
      if (list.length === 0 && keptThreads.get(key) === list) keptThreads.delete(key);
    },
  };
  kept.timer.unref();
  // An idle thread that fails or stops is only forgotten: no export is waiting on it.
  worker.on('exit', kept.forget);
  worker.on('error', kept.forget);
  worker.unref();
  list.push(kept);
  keptThreads.set(key, list);
}

/** A kept Parquet thread of these columns, if any, no longer kept. */
function takeThread(key: string): Worker | null {
  const kept = keptThreads.get(key)?.at(-1);
  if (!kept) return null;
  kept.forget();
  kept.worker.ref();
  return kept.worker;
}

/**
 * Ends every kept Parquet thread: a test that counts them starts from none, whatever exports ran
 * before it in the same process (vitest runs several files in one).
 */
export async function endKeptParquetThreads(): Promise<void> {
  const all = [...keptThreads.values()].flat();
  for (const kept of all) kept.forget();
  await Promise.all(all.map((kept) => kept.worker.terminate()));
}

/** How many Parquet threads are kept now, of any columns (the tests read it). */
export function parquetThreadsKept(): number {
  let n = 0;
  for (const list of keptThreads.values()) n += list.length;
  return n;
}

/**
 * NDJSON in, CSV out, the encoding done by a worker thread started for this export and ended with
 * it. Backpressure holds: at most CSV_IN_FLIGHT chunks wait in the thread, and the Transform's own
 * buffers bound the rest.
 */
export class CsvThread extends Transform {
  private readonly worker: Worker;
  private inFlight = 0;
  private held: TransformCallback | null = null;
  private finishing: TransformCallback | null = null;
  private finished = false;

  constructor(columns: readonly Column[]) {
    super({ writableHighWaterMark: 1 << 20, readableHighWaterMark: 1 << 20 });
    this.worker = startThread('csv', columns);
    this.worker.on('message', (m: FromCsvThread) => this.received(m));
    this.worker.on('error', (err) => this.destroy(err));
    this.worker.on('exit', (code) => {
      if (!this.finished) this.destroy(new Error(`the CSV encoder's thread stopped (exit code ${code})`));
    });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const bytes = own(chunk);
    this.worker.postMessage(bytes, [bytes.buffer]);
    this.inFlight++;
    if (this.inFlight < CSV_IN_FLIGHT) done();
    else this.held = done;
  }

  override _flush(done: TransformCallback): void {
    this.finishing = done;
    this.worker.postMessage(null);
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    if (!this.finished) {
      this.finished = true;
      void this.worker.terminate();
    }
    done(err);
  }

  private received(m: FromCsvThread): void {
    if (m === 'encoded') {
      this.inFlight--;
      const held = this.held;
      this.held = null;
      held?.();
    } else if (m === 'finished') {
      this.finished = true;
      this.finishing?.();
    } else {
      this.push(Buffer.from(m.buffer, m.byteOffset, m.byteLength));
    }
  }
}

/** A thread working for an export, and the export's listeners on it (taken off when the thread is kept). */
interface ExportThread {
  worker: Worker;
  listeners: { message: (m: GroupEncoded) => void; error: (err: Error) => void; exit: (code: number) => void };
}

/**
 * NDJSON in, Parquet out: the lines cut into row groups of PARQUET_ROW_GROUP on the export's side
 * (a scan for line ends, no parsing), each group sent to the next of up to PARQUET_THREADS
 * threads in turn (kept from an earlier export or started as the groups need them), encoded
 * there, and the groups put back in order into one file (ParquetFile). At most
 * PARQUET_IN_FLIGHT_PER_THREAD groups per thread are out before the export's side waits, so
 * memory is a few groups' NDJSON whatever the export's size. An export that ends complete leaves
 * its threads to the next (keepThread); one that fails or is cut off ends them.
 */
export class ParquetThreads extends Transform {
  private readonly columns: readonly Column[];
  /** The columns as JSON: which kept threads can encode them. */
  private readonly key: string;
  private readonly file: ParquetFile;
  private readonly threads: ExportThread[] = [];
  /** The group being gathered: its complete lines so far, and how many. */
  private parts: Uint8Array[] = [];
  private partsBytes = 0;
  private lines = 0;
  private sent = 0;
  private added = 0;
  private readonly back = new Map<number, EncodedRowGroup | null>();
  private held: TransformCallback | null = null;
  private finishing: TransformCallback | null = null;
  private stopped = false;

  constructor(columns: readonly Column[]) {
    super({ writableHighWaterMark: 1 << 20, readableHighWaterMark: 1 << 20 });
    this.columns = columns;
    this.key = JSON.stringify(columns);
    this.file = new ParquetFile(columns, (b) => this.push(b));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, nl + 1)) {
      if (++this.lines === PARQUET_ROW_GROUP) {
        this.gather(chunk.subarray(from, nl + 1));
        from = nl + 1;
        this.send();
      }
    }
    if (from < chunk.length) this.gather(chunk.subarray(from));
    if (this.sent - this.added < PARQUET_THREADS * PARQUET_IN_FLIGHT_PER_THREAD) done();
    else this.held = done;
  }

  override _flush(done: TransformCallback): void {
    // A last line without its line end is a line too.
    if (this.partsBytes > 0) {
      const last = this.parts[this.parts.length - 1];
      if (last[last.length - 1] !== 10) this.gather(Buffer.from('\n'));
      this.send();
    }
    this.finishing = done;
    this.finishIfDone();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.stop();
    done(err);
  }

  private gather(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.parts.push(bytes);
    this.partsBytes += bytes.length;
  }

  private send(): void {
    const lines = new Uint8Array(this.partsBytes);
    let at = 0;
    for (const p of this.parts) {
      lines.set(p, at);
      at += p.length;
    }
    this.parts = [];
    this.partsBytes = 0;
    this.lines = 0;
    const index = this.sent++;
    const message: GroupLines = { index, lines };
    this.thread(index).postMessage(message, [lines.buffer]);
  }

  private thread(index: number): Worker {
    const n = index % PARQUET_THREADS;
    const existing = this.threads[n];
    if (existing) return existing.worker;
    const worker = takeThread(this.key) ?? startThread('parquet', this.columns);
    const listeners: ExportThread['listeners'] = {
      message: (m) => this.received(m),
      error: (err) => this.destroy(err),
      exit: (code) => {
        if (!this.stopped) this.destroy(new Error(`a Parquet encoder's thread stopped (exit code ${code})`));
      },
    };
    worker.on('message', listeners.message);
    worker.on('error', listeners.error);
    worker.on('exit', listeners.exit);
    this.threads[n] = { worker, listeners };
    return worker;
  }

  private received(m: GroupEncoded): void {
    this.back.set(m.index, m.group);
    try {
      while (this.back.has(this.added)) {
        const g = this.back.get(this.added);
        this.back.delete(this.added);
        if (g) this.file.add(g);
        this.added++;
      }
    } catch (err) {
      this.destroy(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const held = this.held;
    this.held = null;
    held?.();
    this.finishIfDone();
  }

  private finishIfDone(): void {
    const done = this.finishing;
    if (!done || this.added < this.sent) return;
    this.finishing = null;
    this.release();
    try {
      this.file.finish();
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Every group is back, so nothing of this export is left in its threads: they are kept for the next. */
  private release(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const { worker, listeners } of this.threads) {
      worker.off('message', listeners.message);
      worker.off('error', listeners.error);
      worker.off('exit', listeners.exit);
      keepThread(this.key, worker);
    }
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const { worker } of this.threads) void worker.terminate();
  }
}

function isThreadData(data: unknown): data is ThreadData {
  return typeof data === 'object' && data !== null && 'role' in data && data.role === ROLE;
}

/** The CSV thread's side: NDJSON chunks in (null at the end), CSV bytes out, in order. */
function encodeCsvHere(columns: readonly Column[]): void {
  const port = parentPort;
  if (!port) return;
  const encoder = new CsvEncoder(columns);
  encoder.on('data', (b: Buffer) => {
    const bytes = own(b);
    port.postMessage(bytes, [bytes.buffer]);
  });
  encoder.on('end', () => {
    port.postMessage('finished');
    port.close();
  });
  // An encoding error ends the thread with it; the export's side sees it as the worker's 'error'.
  encoder.on('error', (err) => {
    throw err;
  });
  port.on('message', (chunk: Uint8Array | null) => {
    if (chunk === null) encoder.end();
    else encoder.write(chunk, () => port.postMessage('encoded'));
  });
}

/** A Parquet thread's side: one row group's lines in, the group encoded out (a parse error ends the thread). */
function encodeParquetGroupsHere(columns: readonly Column[]): void {
  const port = parentPort;
  if (!port) return;
  const groups = new RowGroupEncoder(columns);
  port.on('message', (m: GroupLines) => {
    const text = new StringDecoder('utf8').end(Buffer.from(m.lines.buffer, m.lines.byteOffset, m.lines.byteLength));
    const records = text.trim() === '' ? [] : parseLines(text.slice(0, text.lastIndexOf('\n')));
    const group = records.length > 0 ? groups.encode(records) : null;
    const reply: GroupEncoded = { index: m.index, group };
    port.postMessage(reply, group ? [group.bytes.buffer] : []);
  });
}

if (!isMainThread && isThreadData(workerData)) {
  if (workerData.mode === 'csv') encodeCsvHere(workerData.columns);
  else encodeParquetGroupsHere(workerData.columns);
}
