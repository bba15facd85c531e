import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { CsvThread, EXPORT_COLUMNS, FORMATS, ParquetEncoder, PARQUET_ROW_GROUP, type Column } from '../src/export/formats.js';
import { endKeptParquetThreads, parquetThreadsKept } from '../src/export/encoder-thread.js';
import { instantMs, parquetSchema, RowGroupEncoder } from '../src/export/parquet.js';
import { exportSource } from './fixtures/encode-export.mjs';

type Entity = 'events' | 'competitions';

function encoderOf(format: 'csv' | 'parquet', entity: Entity) {
  const make = FORMATS[format].encoder;
  if (!make) throw new Error(`${format} has no encoder`);
  return make(entity);
}

/** Everything an encoder writes, as one Buffer. */
async function encode(format: 'csv' | 'parquet', ndjson: Iterable<Buffer | string> | Readable, entity: Entity = 'competitions'): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(
    ndjson instanceof Readable ? ndjson : Readable.from([...ndjson].map((s) => Buffer.from(s))),
    encoderOf(format, entity),
    new Writable({
      write(chunk: Buffer, _enc, done) {
        parts.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(parts);
}

/** The same NDJSON through the single-thread Parquet encoder. */
async function encodeHere(ndjson: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(ndjson, new ParquetEncoder(EXPORT_COLUMNS.events), async (src: AsyncIterable<Buffer>) => {
    for await (const b of src) parts.push(b);
  });
  return Buffer.concat(parts);
}

describe('the export encoder threads (export/encoder-thread.ts)', () => {
  it('turns NDJSON cut anywhere, even inside a character, into the rows in order', async () => {
    const lines = ['{"id":"g1","sport":"football","name":"Zürich, \\"A\\""}\n', '{"id":"g2","sport":"football"}\n'].join('');
    // Cut inside the two bytes of ü and inside the second line.
    const at = Buffer.from(lines).indexOf(0xc3) + 1;
    const bytes = Buffer.from(lines);
    const whole = await new Promise<string>((resolve, reject) => {
      const out: Buffer[] = [];
      const enc = new CsvThread(EXPORT_COLUMNS.competitions);
      enc.on('data', (b: Buffer) => out.push(b));
      enc.on('end', () => resolve(Buffer.concat(out).toString()));
      enc.on('error', reject);
      enc.write(bytes.subarray(0, at));
      enc.write(bytes.subarray(at, at + 20));
      enc.end(bytes.subarray(at + 20));
    });
    const rows = whole.split('\r\n');
    expect(rows[0]).toMatch(/^id,/);
    expect(rows[1]).toMatch(/^g1,/);
    expect(rows[1]).toContain('"Zürich, ""A"""');
    expect(rows[2]).toMatch(/^g2,/);
    expect(rows[3]).toBe('');
  });

  it('ends the stream with the error when a line is not JSON, and the thread with it', async () => {
    for (const format of ['csv', 'parquet'] as const) {
      await expect(encode(format, ['{"id":"g1"}\n', '{"id": oops}\n'])).rejects.toThrow(/JSON/);
    }
  });

  it('puts row groups encoded in several threads together into the file one thread writes, byte for byte', async () => {
    // Three and a half groups, in pages that do not fall on a group's end.
    const rows = PARQUET_ROW_GROUP * 3 + PARQUET_ROW_GROUP / 2;
    const threaded = await encode('parquet', exportSource(rows).stream, 'events');
    const single = await encodeHere(exportSource(rows).stream);
    expect(threaded.length).toBeGreaterThan(1000);
    expect(threaded.equals(single)).toBe(true);
    // An empty export is a file with no row group, in both.
    expect((await encode('parquet', [], 'events')).equals(await encodeHere(Readable.from([])))).toBe(true);
  });

  it('keeps the threads of a complete Parquet export for the next one, and ends those of a failed one', async () => {
    // Another file's exports in this process may have left threads of other columns kept.
    await endKeptParquetThreads();
    const rows = PARQUET_ROW_GROUP * 2 + 10;
    const single = await encodeHere(exportSource(rows).stream);
    // Two exports in a row: the second one's groups are encoded by the threads the first one left.
    for (let i = 0; i < 2; i++) {
      expect((await encode('parquet', exportSource(rows).stream, 'events')).equals(single)).toBe(true);
      expect(parquetThreadsKept()).toBe(2);
    }
    // Other columns are not encoded by threads kept for the events' columns.
    const competition = { id: 'g1', sport: 'football', league: 'wc', season: '2022', season_id: 'wc_2022', date: '2022-11-20', status: 'final', competitors: [], synthetic: false };
    await encode('parquet', [`${JSON.stringify(competition)}\n`], 'competitions');
    expect(parquetThreadsKept()).toBe(3);
    // A failed export takes a kept thread and ends it (its groups may still be in it).
    await expect(encode('parquet', ['{"id": oops}\n'], 'competitions')).rejects.toThrow(/JSON/);
    await vi.waitFor(() => expect(parquetThreadsKept()).toBe(2));
  });

  it('writes a Parquet file that starts and ends with its magic number', async () => {
    const event = {
      id: 'evt_000000000001', type: 'score', tier: 'confirmed', game_id: 'basketball_1', sport: 'basketball', league: 'xbl', team: 'team:xbl:T1',
      event_type: 'three_pointer', points: 3, clock: null, ts: '2025-01-01T00:00:00.000Z', confidence: { agreement: 1, reporters: 3, latency_ms: 20 }, schema: 'svc.event.v1',
    };
    const file = await encode('parquet', [`${JSON.stringify(event)}\n`], 'events');
    expect(file.subarray(0, 4).toString()).toBe('PAR1');
    expect(file.subarray(-4).toString()).toBe('PAR1');
  });
});

describe('RowGroupEncoder: what hyparquet-writer writes from the records themselves (export/parquet.ts)', () => {
  /** A row group as hyparquet-writer writes it from each column's values as they are (strings as strings), its choice of encodings its own. */
  function reference(columns: readonly Column[], records: readonly Record<string, unknown>[]) {
    const writer = new ByteWriter();
    const w = new ParquetWriter({ writer, schema: parquetSchema(columns) });
    const columnData = columns.map((c) => ({ name: c.name, data: records.map((r) => r[c.name] ?? null), nullable: c.nullable, statistics: c.kind !== 'string' }));
    w.write({ columnData, rowGroupSize: records.length });
    return { bytes: new Uint8Array(writer.buffer.slice(4, writer.index)), rowGroup: w.row_groups[0] };
  }

  const columns: Column[] = [
    { name: 'id', path: ['id'], kind: 'string', nullable: false },
    { name: 'note', path: ['note'], kind: 'string', nullable: true },
    { name: 'team', path: ['team'], kind: 'string', nullable: false },
    { name: 'n', path: ['n'], kind: 'integer', nullable: false },
  ];

  it('writes strings that get no dictionary (given to it as UTF-8 already) byte for byte as it does from the strings', () => {
    // Any UTF-16 (lone surrogates too, which UTF-8 writes as U+FFFD), distinct or repeated, with nulls.
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'grapheme-ascii', maxLength: 20 }), fc.constantFrom('', 'Zürich', '東京', '😀', 'a\uD800b', '\uDFFF'));
    fc.assert(
      fc.property(fc.array(fc.tuple(text, fc.option(text), fc.constantFrom('T1', 'T2')), { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 3 }), (rows, repeat) => {
        const records = rows.map(([id, note, team], i) => ({ id: `${id}${repeat === 0 ? i : i % (repeat * 3)}`, note, team, n: i }));
        const got = new RowGroupEncoder(columns).encode(records);
        const want = reference(columns, records);
        expect(got.rowGroup.columns.map((c) => c.meta_data?.encodings)).toEqual(want.rowGroup.columns.map((c) => c.meta_data?.encodings));
        expect(Buffer.from(got.bytes).equals(Buffer.from(want.bytes))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('writes an export\'s ids PLAIN and its columns of few values with a dictionary, as hyparquet-writer chooses', () => {
    const records = Array.from({ length: 5000 }, (_, i) => ({ id: `evt_${String(i).padStart(12, '0')}`, note: i % 9 === 0 ? null : `n${i}`, team: `T${i % 30}`, n: i % 4 }));
    const got = new RowGroupEncoder(columns).encode(records);
    expect(got.rowGroup.columns.map((c) => c.meta_data?.encodings)).toEqual([['PLAIN'], ['PLAIN'], ['PLAIN', 'RLE_DICTIONARY'], ['PLAIN', 'RLE_DICTIONARY']]);
    expect(Buffer.from(got.bytes).equals(Buffer.from(reference(columns, records).bytes))).toBe(true);
  });
});

describe('instantMs: the Parquet timestamps read from the export (export/parquet.ts)', () => {
  it('reads every toISOString() instant to its millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(100, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        expect(instantMs(new Date(ms).toISOString())).toBe(ms);
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with Date.parse on anything else', () => {
    const near = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.string({ minLength: 1, maxLength: 1 })).map(([i, c]) => {
      const s = '2025-06-30T12:34:56.789Z';
      return s.slice(0, i) + c + s.slice(i + 1);
    });
    fc.assert(
      fc.property(fc.oneof(near, fc.string({ maxLength: 30 })), (s) => {
        expect(instantMs(s)).toBe(Date.parse(s));
      }),
      { numRuns: 5000 },
    );
    for (const s of ['0025-01-01T00:00:00.000Z', '2025-02-30T00:00:00.000Z', '2025-13-01T00:00:00.000Z', '2025-01-01T24:00:00.000Z']) {
      expect(instantMs(s)).toBe(Date.parse(s));
    }
  });
});
