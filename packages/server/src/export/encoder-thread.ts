import { Transform, type TransformCallback } from 'node:stream';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CsvEncoder } from './csv.ts';
import { ParquetEncoder } from './parquet.ts';
import type { Column } from './records.ts';

/**
 * A CSV or Parquet export encoded in a thread of its own (docs/decisions.md "Export formats"). The
 * export's thread reads pages and writes their NDJSON; parsing those lines again and encoding them
 * (more than half of a Parquet export's CPU, about half of a CSV's) would be serial with it on the
 * event loop, holding it for tens of milliseconds a Parquet row group. Here the NDJSON bytes go to
 * this module's own worker, which parses and encodes while the export's thread makes the next
 * pages, and the encoded bytes come back: the two halves run side by side, and the event loop that
 * serves the live feed holds none of the encoding.
 *
 * Node runs this file in the thread as it is (its types stripped; see records.ts): the module is
 * the worker's entry, told apart by its `workerData`.
 */

/** The formats encoded in the thread. */
export type EncodedFormat = 'csv' | 'parquet';

/** Marks the worker's data, so that no other worker that loads this module starts encoding. */
const ROLE = 'svc-export-encoder';

/** NDJSON chunks handed to the thread and not yet encoded before the export's side waits: two keep both threads busy. */
const IN_FLIGHT = 2;

interface ThreadData {
  role: typeof ROLE;
  format: EncodedFormat;
  columns: readonly Column[];
}

/** What the thread sends back: encoded bytes, a chunk encoded, or the file complete. */
type FromThread = Uint8Array | 'encoded' | 'finished';

/** A copy of `bytes` in an ArrayBuffer of its own, to transfer rather than clone with whatever buffer it is a view of. */
function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/**
 * NDJSON in, CSV or Parquet out, the encoding done by a worker thread started for this export and
 * ended with it. Backpressure holds: at most IN_FLIGHT chunks wait in the thread, and the
 * Transform's own buffers bound the rest, so memory is the thread's one row group plus buffers.
 */
export class EncoderThread extends Transform {
  private readonly worker: Worker;
  private inFlight = 0;
  private held: TransformCallback | null = null;
  private finishing: TransformCallback | null = null;
  private finished = false;

  constructor(format: EncodedFormat, columns: readonly Column[]) {
    super({ writableHighWaterMark: 1 << 20, readableHighWaterMark: 1 << 20 });
    const data: ThreadData = { role: ROLE, format, columns };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.worker.on('message', (m: FromThread) => this.received(m));
    this.worker.on('error', (err) => this.destroy(err));
    this.worker.on('exit', (code) => {
      if (!this.finished) this.destroy(new Error(`the export encoder's thread stopped (exit code ${code})`));
    });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const bytes = own(chunk);
    this.worker.postMessage(bytes, [bytes.buffer]);
    this.inFlight++;
    if (this.inFlight < IN_FLIGHT) done();
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

  private received(m: FromThread): void {
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

function isThreadData(data: unknown): data is ThreadData {
  return typeof data === 'object' && data !== null && 'role' in data && data.role === ROLE;
}

/** The worker's side: NDJSON chunks in (null at the end), encoded bytes out, in order. */
function encodeInThisThread(format: EncodedFormat, columns: readonly Column[]): void {
  const port = parentPort;
  if (!port) return;
  const encoder = format === 'csv' ? new CsvEncoder(columns) : new ParquetEncoder(columns);
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

if (!isMainThread && isThreadData(workerData)) encodeInThisThread(workerData.format, workerData.columns);
