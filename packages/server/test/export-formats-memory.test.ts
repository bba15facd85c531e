import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { CsvEncoder, EXPORT_COLUMNS, ParquetEncoder, PARQUET_ROW_GROUP } from '../src/export/formats.js';
import { tmpDir } from './helpers.js';

/**
 * Memory of the CSV and Parquet encoders on a 1,000,000-event export, in the suite: the rows come
 * from a generator of NDJSON pages (the database path's output, without a database to fill), so
 * the test costs seconds. The same export from a real 1M-event database is measured by
 * bench/export.ts --formats (peak RSS of the server, bench/RESULTS.md "Export formats").
 */
const EVENTS = 1_000_000;
const PAGE = 1000;

/** NDJSON pages of events shaped like the export's lines; counts the rows handed out. */
function source(total: number): { stream: Readable; pulled: () => number } {
  let pulled = 0;
  function* pages() {
    for (let start = 0; start < total; start += PAGE) {
      let text = '';
      for (let i = start; i < Math.min(total, start + PAGE); i++) {
        const ts = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
        text += `${JSON.stringify({
          id: `evt_${String(i + 1).padStart(12, '0')}`, type: 'score', tier: 'confirmed', game_id: `basketball_${1 + (i >> 8)}`, sport: 'basketball', league: 'xbl',
          team: `team:xbl:T${i % 30}`, event_type: i % 3 === 0 ? 'three_pointer' : 'two_pointer', points: 2 + (i % 3 === 0 ? 1 : 0), clock: i % 7 === 0 ? null : `${i % 12}:00`,
          ts, confidence: { agreement: (i % 5) / 4, reporters: 3 + (i % 4), latency_ms: i % 5000 }, ...(i % 11 === 0 ? { provisional_id: `evt_p${i}` } : {}), schema: 'svc.event.v1',
        })}\n`;
      }
      pulled += Math.min(total, start + PAGE) - start;
      yield Buffer.from(text);
    }
  }
  return { stream: Readable.from(pages(), { objectMode: false }), pulled: () => pulled };
}

/** Peak of heap and buffers (ArrayBuffers hold the encoded bytes) above the level at start, in MiB. */
function sampleMemory(): { stop(): number } {
  global.gc?.();
  const level = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = level();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, level());
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return (Math.max(peak, level()) - base) / 1048576;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CSV and Parquet encoders keep memory flat (export/formats.ts)', () => {
  for (const format of ['csv', 'parquet'] as const) {
    const encoder = () => (format === 'csv' ? new CsvEncoder(EXPORT_COLUMNS.events) : new ParquetEncoder(EXPORT_COLUMNS.events));

    it(`${format}: a reader that does not read stops the rows from being pulled`, async () => {
      const src = source(EVENTS);
      const enc = encoder();
      src.stream.pipe(enc);
      await sleep(300);
      const paused = src.pulled();
      await sleep(300);
      expect(src.pulled()).toBe(paused);
      // Buffers of about a MiB each side (of compressed output for Parquet, several row groups): a small part of the export.
      expect(paused).toBeLessThan(EVENTS / 5);
      src.stream.destroy();
      enc.destroy();
    });

    it(`${format}: 1,000,000 events stream through with memory flat, every row in the file`, async () => {
      const dir = tmpDir('svc-formats-mem-');
      const file = path.join(dir, `events.${format}`);
      const src = source(EVENTS);
      const mem = sampleMemory();
      let bytes = 0;
      let crlf = 0;
      // CSV is counted as it goes (a quarter of a GB); Parquet is written to a file and read back.
      const out = fs.createWriteStream(format === 'parquet' ? file : '/dev/null');
      await pipeline(
        src.stream,
        encoder(),
        new Writable({
          write(chunk: Buffer, _enc, done) {
            bytes += chunk.length;
            if (format === 'csv') for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) crlf++;
            if (out.write(chunk)) done();
            else out.once('drain', () => done());
          },
          final(done) {
            out.end(() => done());
          },
        }),
      );
      const peakMiB = mem.stop();
      expect(src.pulled()).toBe(EVENTS);
      if (format === 'csv') {
        expect(crlf).toBe(EVENTS + 1);
        expect(bytes).toBeGreaterThan(EVENTS * 100);
      } else {
        const duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', threads: '1' });
        const conn = await duck.connect();
        const r = (await conn.runAndReadAll(`select count(*)::INTEGER as n, min(id) as lo, max(id) as hi from read_parquet('${file}')`)).getRowObjectsJS();
        const groups = (await conn.runAndReadAll(`select count(distinct row_group_id)::INTEGER as g from parquet_metadata('${file}')`)).getRowObjectsJS();
        conn.closeSync();
        expect(r[0]).toMatchObject({ n: EVENTS, lo: 'evt_000000000001', hi: 'evt_000001000000' });
        expect(groups[0].g).toBe(EVENTS / PARQUET_ROW_GROUP);
      }
      // Kept whole, the rows would take well over a GiB of heap; streamed, a row group and buffers.
      expect(peakMiB).toBeLessThan(160);
      fs.rmSync(dir, { recursive: true, force: true });
    }, 180_000);
  }
});
