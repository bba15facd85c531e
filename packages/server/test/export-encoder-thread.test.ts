import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvThread, EXPORT_COLUMNS, FORMATS, ParquetEncoder, PARQUET_ROW_GROUP } from '../src/export/formats.js';
import { instantMs } from '../src/export/parquet.js';
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
