// bench/export-encoders: the CSV and Parquet encoders alone (no database, no HTTP) over the same
// NDJSON lines, rows/s of each, to profile them: node --cpu-prof --import tsx bench/export-encoders.ts FILE [ROWS]
// FILE is an events export (e.g. bench/export's cached season file under bench/.out/export-large/export-cache).
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { EXPORT_FORMATS as FORMATS } from '@svc/server';

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: bench/export-encoders.ts FILE [ROWS]');
const want = Number(rowsArg ?? 200_000);
const text = fs.readFileSync(file, 'utf8');
let end = 0;
for (let i = 0; i < want && end >= 0; i++) end = text.indexOf('\n', end + 1);
const body = Buffer.from(end < 0 ? text : text.slice(0, end + 1));
const rows = want;
const formats = (process.env.FORMATS ?? 'csv,parquet').split(',') as ('csv' | 'parquet')[];
for (const format of formats) {
  const encoder = FORMATS[format].encoder?.('events');
  if (!encoder) throw new Error(format);
  const hash = createHash('sha256');
  let bytes = 0;
  const t0 = performance.now();
  // 256 KiB chunks, as a file or socket stream hands them over.
  const chunks = function* () {
    for (let i = 0; i < body.length; i += 1 << 18) yield body.subarray(i, i + (1 << 18));
  };
  await pipeline(Readable.from(chunks()), encoder, async (src: AsyncIterable<Buffer | string>) => {
    for await (const b of src) {
      bytes += b.length;
      hash.update(b);
    }
  });
  const s = (performance.now() - t0) / 1000;
  process.stdout.write(`${format}: ${rows} rows in ${s.toFixed(2)} s, ${Math.round(rows / s)} rows/s, ${bytes} bytes, sha256 ${hash.digest('hex').slice(0, 16)}\n`);
}
