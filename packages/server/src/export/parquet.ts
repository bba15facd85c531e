import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { getterOf, RecordEncoder, type Column, type Getter } from './records.ts';

/**
 * Parquet from an export's records (docs/decisions.md "Export formats"): the columns' Parquet
 * types and the row-group encoder. Loaded by the Parquet encoder's thread as it is, like
 * records.ts (see there): erasable TypeScript, no project imports but by `.ts` name.
 */

/** Rows per Parquet row group: each group is encoded at once, so this bounds memory and the time one encoding holds the thread. */
export const PARQUET_ROW_GROUP = 10_000;

const REPETITION = (c: Column): 'OPTIONAL' | 'REQUIRED' => (c.nullable ? 'OPTIONAL' : 'REQUIRED');

/** A column's Parquet schema element: strings UTF8, integers INT32, instants TIMESTAMP(ms, UTC), dates DATE. */
function parquetElement(c: Column): SchemaElement {
  const base = { name: c.name, repetition_type: REPETITION(c) };
  switch (c.kind) {
    case 'string':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
    case 'json':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' } };
    case 'integer':
      // Every integer of a record is stored as a 32-bit integer on both engines (store/migrations.ts).
      return { ...base, type: 'INT32' };
    case 'number':
      return { ...base, type: 'DOUBLE' };
    case 'boolean':
      return { ...base, type: 'BOOLEAN' };
    case 'timestamp':
      return { ...base, type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } };
    case 'date':
      return { ...base, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
  }
}

const DAY_MS = 86_400_000;

const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
};

/**
 * Milliseconds of an ISO 8601 instant. The export's instants are all `Date#toISOString()`'s
 * `YYYY-MM-DDTHH:MM:SS.sssZ`, read here digit by digit (Date.parse, which takes any form, was a
 * tenth of the encoder's time); anything else goes to Date.parse.
 */
export function instantMs(s: string): number {
  if (s.length === 24 && s[4] === '-' && s[7] === '-' && s[10] === 'T' && s[13] === ':' && s[16] === ':' && s[19] === '.' && s[23] === 'Z') {
    const year = digits(s, 0, 4);
    const month = digits(s, 5, 7);
    const day = digits(s, 8, 10);
    const hour = digits(s, 11, 13);
    const minute = digits(s, 14, 16);
    const second = digits(s, 17, 19);
    // Date.UTC rolls an out-of-range field into the next and reads years below 100 as 19xx: those go to Date.parse.
    if (year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour <= 23 && minute <= 59 && second <= 59) {
      return Date.UTC(year, month - 1, day, hour, minute, second, digits(s, 20, 23));
    }
  }
  return Date.parse(s);
}

/** A record's value as the Parquet writer takes it for the column's type, made once per column. */
function parquetGetter(c: Column): Getter {
  const get = getterOf(c.path);
  switch (c.kind) {
    case 'timestamp':
      return (r) => {
        const v = get(r);
        if (v === null || v === undefined) return null;
        return typeof v === 'string' ? instantMs(v) : v;
      };
    case 'date':
      return (r) => {
        const v = get(r);
        if (v === null || v === undefined) return null;
        return typeof v === 'string' ? Date.parse(`${v}T00:00:00.000Z`) / DAY_MS : v;
      };
    default:
      return (r) => get(r) ?? null;
  }
}

/** Hands what the Parquet writer has written so far to `out` after every row group and at the end. */
class ChunkWriter extends ByteWriter {
  private readonly out: (bytes: Buffer) => void;

  constructor(out: (bytes: Buffer) => void) {
    super(1 << 16);
    this.out = out;
  }

  flush(): void {
    if (this.index === 0) return;
    this.out(Buffer.from(new Uint8Array(this.buffer, 0, this.index)));
    this.index = 0;
  }

  override finish(): void {
    this.flush();
  }
}

/**
 * Parquet, written by hyparquet-writer a row group at a time: the rows of a group are gathered
 * column by column, encoded (snappy) and passed on, and only the footer's metadata (a few
 * hundred bytes a group) stays until the end. Memory is one row group whatever the export's size.
 * It runs on whichever thread holds it: an export runs it in a thread of its own
 * (encoder-thread.ts).
 */
export class ParquetEncoder extends RecordEncoder {
  private readonly columns: readonly Column[];
  private readonly writer: ParquetWriter;
  private readonly getters: readonly Getter[];
  private values: unknown[][];
  private rows = 0;

  constructor(columns: readonly Column[]) {
    super();
    this.columns = columns;
    this.getters = columns.map(parquetGetter);
    const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map(parquetElement)];
    this.writer = new ParquetWriter({ writer: new ChunkWriter((b) => this.push(b)), schema, createdBy: 'svc export (hyparquet-writer)' });
    this.values = columns.map(() => []);
  }

  protected encode(records: unknown[]): void {
    // Column by column over the records up to the end of the row group: each column's getter and
    // array stay hot for a run of rows instead of changing at every cell.
    const n = this.columns.length;
    let from = 0;
    while (from < records.length) {
      const to = Math.min(records.length, from + PARQUET_ROW_GROUP - this.rows);
      for (let i = 0; i < n; i++) {
        const get = this.getters[i];
        const out = this.values[i];
        for (let j = from; j < to; j++) out.push(get(records[j]));
      }
      this.rows += to - from;
      from = to;
      if (this.rows === PARQUET_ROW_GROUP) this.group();
    }
  }

  private group(): void {
    if (this.rows === 0) return;
    const columnData: ColumnSource[] = this.columns.map((c, i) => ({ name: c.name, data: this.values[i], nullable: c.nullable, statistics: c.kind !== 'json' && c.kind !== 'string' }));
    const pending = this.writer.write({ columnData, rowGroupSize: this.rows });
    // ChunkWriter.flush is synchronous, so the writer never has a promise to hand back.
    if (pending) throw new Error('parquet writer went asynchronous');
    this.values = this.columns.map(() => []);
    this.rows = 0;
  }

  protected finishRecords(): void {
    this.group();
    const done = this.writer.finish();
    if (done) throw new Error('parquet writer went asynchronous');
  }
}

