import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * An export's records as columns (docs/decisions.md "Export formats"): what a column holds, how a
 * column's value is read from a record, and the NDJSON lines turned back into records. Shared by
 * the CSV and Parquet encoders. This module, csv.ts and parquet.ts also run in the export
 * encoder's own thread (encoder-thread.ts), where Node loads them as they are, stripping their
 * types: so they import nothing of the project but each other, by their `.ts` names, and use only
 * TypeScript that is erased (no parameter properties, no enums).
 */

/** What a column holds, which decides its Parquet type and its CSV text. */
export type ColumnKind = 'string' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'date' | 'json';

export interface Column {
  /** The dotted path: the CSV header and the Parquet column name. */
  name: string;
  path: readonly string[];
  kind: ColumnKind;
  /** Null or absent in some records: an empty CSV field, an OPTIONAL Parquet column. */
  nullable: boolean;
}

const isObject = (v: unknown): v is { [key: string]: unknown } => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A function reading a column's value from a record, undefined where the record leaves it out.
 * Made once per column rather than walking the path for every cell: the encoders call it once per
 * cell of an export, millions of times (bench/history/2026-11-29.md "Export formats").
 */
export type Getter = (record: unknown) => unknown;

export function getterOf(path: readonly string[]): Getter {
  if (path.length === 1) {
    const [a] = path;
    return (r) => (isObject(r) ? r[a] : undefined);
  }
  if (path.length === 2) {
    const [a, b] = path;
    return (r) => {
      const v = isObject(r) ? r[a] : undefined;
      return isObject(v) ? v[b] : undefined;
    };
  }
  return (record) => {
    let v = record;
    for (const key of path) {
      if (!isObject(v)) return undefined;
      v = v[key];
    }
    return v;
  };
}

/**
 * Complete NDJSON lines (without the last newline) as records, in one JSON.parse of an array:
 * a line is one JSON value whose strings escape their line breaks, so a raw newline only ever
 * separates two lines, and one parse of a page costs far less than a parse per line.
 */
export function parseLines(lines: string): unknown[] {
  const parsed: unknown = JSON.parse(`[${lines.replaceAll('\n', ',')}]`);
  if (!Array.isArray(parsed)) throw new Error('export lines did not parse as records');
  return parsed;
}

/**
 * Splits NDJSON text (in chunks cut anywhere, even inside a UTF-8 character) into parsed records
 * and hands each chunk's records to `encode`; `end` runs once the input is over.
 */
export abstract class RecordEncoder extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  constructor() {
    super({ writableHighWaterMark: 1 << 20, readableHighWaterMark: 1 << 20 });
  }

  protected abstract encode(records: unknown[]): void;
  protected abstract finishRecords(): void;

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    const text = this.rest + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const last = text.lastIndexOf('\n');
    if (last < 0) {
      this.rest = text;
      done();
      return;
    }
    this.rest = text.slice(last + 1);
    try {
      this.encode(parseLines(text.slice(0, last)));
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }

  override _flush(done: TransformCallback): void {
    const tail = this.rest + this.decoder.end();
    try {
      if (tail.trim() !== '') this.encode([JSON.parse(tail)]);
      this.finishRecords();
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

