import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { FORMATS, PARQUET_ROW_GROUP } from '../src/export/formats.js';
import { exportSource } from './fixtures/encode-export.mjs';
import { tmpDir } from './helpers.js';

/**
 * Memory of the CSV and Parquet encoders on a 1,000,000-event export, in the suite: the rows come
 * from a generator of NDJSON pages (the database path's output, without a database to fill), so
 * the test costs seconds. The encoding runs in a process of its own whose V8 heap is capped
 * (fixtures/encode-export.mjs; the encoder threads have their own cap, 256 MB each,
 * export/encoder-thread.ts): kept whole, the rows would take well over a GiB and a thread or the
 * process would die out of memory, while streamed they need a few row groups and buffers. A cap, unlike a
 * sampled peak, does not count garbage the collector has not yet taken, which a busy machine
 * leaves lying longer. The same export from a real 1M-event database is measured by
 * bench/export.ts --formats (peak RSS of the server, bench/history/2026-11-29.md "Export formats").
 */
const EVENTS = 1_000_000;
const HEAP_CAP_MIB = 64;
const FIXTURE = fileURLToPath(new URL('./fixtures/encode-export.mjs', import.meta.url));

function encodeInCappedProcess(format: 'csv' | 'parquet', file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=svc-compiled', `--max-old-space-size=${HEAP_CAP_MIB}`, FIXTURE, format, String(EVENTS), file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CSV and Parquet encoders keep memory flat (export/formats.ts)', () => {
  for (const format of ['csv', 'parquet'] as const) {
    // The export's own encoder: the format's encoder in its thread (export/encoder-thread.ts).
    const encoder = () => {
      const make = FORMATS[format].encoder;
      if (!make) throw new Error(`${format} has no encoder`);
      return make('events');
    };

    it(`${format}: a reader that does not read stops the rows from being pulled`, async () => {
      const src = exportSource(EVENTS);
      const enc = encoder();
      src.stream.pipe(enc);
      // Until the encoder's output is full nobody has asked it to wait (and the Parquet encoder's
      // thread takes a moment to start on a loaded machine); from then on nothing more is pulled.
      for (let i = 0; i < 100 && enc.readableLength < enc.readableHighWaterMark; i++) await sleep(100);
      expect(enc.readableLength).toBeGreaterThanOrEqual(enc.readableHighWaterMark);
      await sleep(300);
      const paused = src.pulled();
      await sleep(300);
      expect(src.pulled()).toBe(paused);
      // Buffers of about a MiB each side (of compressed output for Parquet, several row groups): a small part of the export.
      expect(paused).toBeLessThan(EVENTS / 5);
      src.stream.destroy();
      enc.destroy();
    });

    it(`${format}: 1,000,000 events stream through a process whose heap is capped at ${HEAP_CAP_MIB} MiB, every row in the file`, async () => {
      const dir = tmpDir('svc-formats-mem-');
      // CSV is counted as it goes (a quarter of a GB); Parquet is written to a file and read back.
      const file = format === 'parquet' ? path.join(dir, 'events.parquet') : '/dev/null';
      const run = await encodeInCappedProcess(format, file);
      expect(run.stderr, 'the encoding process ran out of heap or failed').toBe('');
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as { pulled: number; bytes: number; lines: number; maxRssMiB: number };
      expect(result.pulled).toBe(EVENTS);
      if (format === 'csv') {
        expect(result.lines).toBe(EVENTS + 1);
        expect(result.bytes).toBeGreaterThan(EVENTS * 100);
      } else {
        const duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', threads: '1' });
        const conn = await duck.connect();
        const r = (await conn.runAndReadAll(`select count(*)::INTEGER as n, min(id) as lo, max(id) as hi from read_parquet('${file}')`)).getRowObjectsJS();
        const groups = (await conn.runAndReadAll(`select count(distinct row_group_id)::INTEGER as g from parquet_metadata('${file}')`)).getRowObjectsJS();
        conn.closeSync();
        expect(r[0]).toMatchObject({ n: EVENTS, lo: 'evt_000000000001', hi: 'evt_000001000000' });
        expect(groups[0].g).toBe(EVENTS / PARQUET_ROW_GROUP);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }, 180_000);
  }
});
