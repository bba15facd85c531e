import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Progress } from './progress.js';

/** The API refused the export: its error body, for a one-line message. */
export class ExportHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Download {
  baseUrl: string;
  key: string;
  query: Record<string, string>;
  /** Appends when resuming; null writes to `stdout`. */
  out: { file: string; append: boolean } | null;
  gzip: boolean;
  progress: Progress;
  /** Count records as newlines (NDJSON); a CSV or Parquet file is counted in bytes only. */
  lines?: boolean;
  signal?: AbortSignal;
  stdout?: Writable;
}

function get(url: URL, headers: Record<string, string>, signal?: AbortSignal): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers, signal }, resolve);
    req.on('error', reject);
  });
}

async function errorMessage(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'object' && body.error !== null) {
      const e: { code?: unknown; message?: unknown; param?: unknown } = body.error;
      return `${String(e.code)}: ${String(e.message)}${typeof e.param === 'string' ? ` (param ${e.param})` : ''}`;
    }
  } catch {
    // Not the API's JSON error body (a proxy's page, say): show its start instead.
  }
  return text.slice(0, 200);
}

/** Counts records (newlines) and bytes as they pass, for the progress line. */
function counter(progress: Progress, countLines: boolean): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let lines = 0;
      if (countLines) for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
      progress.add(lines, chunk.length);
      done(null, chunk);
    },
  });
}

/**
 * Streams GET /v1/export into the file: the response is decoded and written as it arrives, with
 * Node's backpressure all the way, so a large export needs no memory. An interrupted transfer
 * rejects; the bytes written so far stay in the file for the next run to resume from.
 */
export async function download(d: Download): Promise<void> {
  const url = new URL('/v1/export', d.baseUrl);
  for (const [k, v] of Object.entries(d.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { authorization: `Bearer ${d.key}` };
  if (d.gzip) headers['accept-encoding'] = 'gzip';
  const res = await get(url, headers, d.signal);
  if (res.statusCode !== 200) throw new ExportHttpError(res.statusCode ?? 0, await errorMessage(res));
  const sink: Writable = d.out ? fs.createWriteStream(d.out.file, { flags: d.out.append ? 'a' : 'w' }) : (d.stdout ?? process.stdout);
  const count = counter(d.progress, d.lines ?? true);
  if (res.headers['content-encoding'] === 'gzip') await pipeline(res, createGunzip(), count, sink, { signal: d.signal });
  else await pipeline(res, count, sink, { signal: d.signal });
}
