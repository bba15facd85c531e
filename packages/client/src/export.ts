import { type APIClient, type RequestOptions, retryDelayS, sleep } from './core.js';
import { APIConnectionError, APIError, APIUserAbortError } from './errors.js';
import type { Competition, Event, ExportEntity, ExportQuery, Play } from './schema.js';

/** The record type of each export entity. */
export interface ExportRecord {
  events: Event;
  plays: Play;
  competitions: Competition;
}

/** The `after` value that resumes an export just past this record (see GET /v1/export). */
function resumeIdOf(entity: ExportEntity, record: Record<string, unknown>): string | undefined {
  if (entity === 'plays') {
    const { competition_id: c, seq } = record;
    return typeof c === 'string' && typeof seq === 'number' ? `${c}:${seq}` : undefined;
  }
  return typeof record.id === 'string' ? record.id : undefined;
}

/**
 * `GET /v1/export` as an async iterable of records. Only complete lines are yielded; when the
 * connection drops (or stalls for `timeoutMs`) the export starts again with `after=<last id>`,
 * so every record arrives once, in order. `maxRetries` bounds consecutive failures without a
 * new record in between.
 */
export async function* exportRecords<E extends ExportEntity>(
  client: APIClient,
  params: ExportQuery & { entity?: E },
  options: RequestOptions = {},
  onChangesCursor: (cursor: string) => void = () => undefined,
): AsyncGenerator<ExportRecord[E], void, undefined> {
  const entity: ExportEntity = params.entity ?? 'events';
  const maxRetries = options.maxRetries ?? client.maxRetries;
  const idleMs = options.timeoutMs ?? client.timeoutMs;
  let after = params.after;
  let failures = 0;
  for (;;) {
    const res = await client.send({ method: 'GET', path: '/v1/export', query: { ...params, after }, options }, true);
    const cursor = res.headers.get('x-changes-cursor');
    if (cursor !== null) onChangesCursor(cursor);
    const body = res.body;
    if (!body) return;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    let dropped: unknown;
    try {
      for (;;) {
        const chunk = await readWithin(reader, idleMs, options.signal);
        if (chunk.done) break;
        buffered += decoder.decode(chunk.value, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim() === '') continue;
          const record: ExportRecord[E] = JSON.parse(line);
          after = resumeIdOf(entity, record) ?? after;
          failures = 0;
          yield record;
        }
      }
    } catch (err) {
      if (err instanceof APIUserAbortError || err instanceof SyntaxError) throw err;
      dropped = err;
    } finally {
      reader.cancel().catch(() => undefined);
    }
    // A body that ends inside a line was cut off as surely as one that errored.
    if (dropped === undefined && buffered.trim() === '') return;
    if (failures >= maxRetries) {
      if (dropped instanceof APIError) throw dropped;
      throw new APIConnectionError(`export connection lost after ${after ?? 'the start'}`, { cause: dropped });
    }
    await sleep(retryDelayS(failures, undefined) * 1000, options.signal);
    failures++;
  }
}

/**
 * `GET /v1/export?format=csv|parquet` as the file's bytes. A CSV or Parquet file cannot be resumed
 * part-way (a Parquet file's index is its footer), so a drop or an idle `timeoutMs` throws
 * `APIConnectionError` and the caller asks again.
 */
export async function* exportBytes(client: APIClient, params: ExportQuery, options: RequestOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const res = await client.send({ method: 'GET', path: '/v1/export', query: { ...params }, options }, true);
  const body = res.body;
  if (!body) return;
  const reader = body.getReader();
  const idleMs = options.timeoutMs ?? client.timeoutMs;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await readWithin(reader, idleMs, options.signal);
      } catch (err) {
        if (err instanceof APIUserAbortError) throw err;
        throw new APIConnectionError('export connection lost inside the file', { cause: err });
      }
      if (chunk.done) return;
      yield chunk.value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

class IdleTimeout extends Error {}

async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new IdleTimeout(`no data for ${ms} ms`)), ms);
        onAbort = () => reject(new APIUserAbortError());
        if (signal?.aborted) onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * What `svc.export()` returns: the records as an async iterable, and once the first answer came
 * in, `changesCursor`: the change feed's position for this export (`X-Changes-Cursor`). Follow
 * `svc.changes.follow({ since: changesCursor })` after the last record and the copy stays exact
 * (docs/changes.md).
 */
export class ExportIterable<T> implements AsyncIterable<T> {
  changesCursor: string | undefined;
  readonly #start: (onCursor: (cursor: string) => void) => AsyncGenerator<T, void, undefined>;
  constructor(start: (onCursor: (cursor: string) => void) => AsyncGenerator<T, void, undefined>) {
    this.#start = start;
  }
  [Symbol.asyncIterator](): AsyncIterator<T> {
    // The first answer's cursor: a resumed export must not move it past records it never sent.
    return this.#start((cursor) => (this.changesCursor ??= cursor));
  }
}
