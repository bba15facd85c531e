import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { getterOf, RecordEncoder, type Column } from './records.ts';

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
      // Every integer of a record is stored as a 32-bit integer on both engines (store/migrations/index.ts).
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

const isObject = (v: unknown): v is { [key: string]: unknown } => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A column of a group's records, null where a record leaves it out: the path read in a loop of
 * the column's own rather than by a getter called per cell (two calls a cell, a tenth of a row
 * group's encoding).
 */
function columnOf(path: readonly string[], records: readonly unknown[]): unknown[] {
  const n = records.length;
  const out = new Array<unknown>(n);
  if (path.length === 1) {
    const [a] = path;
    for (let j = 0; j < n; j++) {
      const r = records[j];
      out[j] = isObject(r) ? (r[a] ?? null) : null;
    }
  } else if (path.length === 2) {
    const [a, b] = path;
    for (let j = 0; j < n; j++) {
      const r = records[j];
      const v = isObject(r) ? r[a] : undefined;
      out[j] = isObject(v) ? (v[b] ?? null) : null;
    }
  } else {
    const get = getterOf(path);
    for (let j = 0; j < n; j++) out[j] = get(records[j]) ?? null;
  }
  return out;
}

/** A column's values as the Parquet writer takes them for its type: instants as epoch milliseconds, dates as days. */
function parquetValues(c: Column, records: readonly unknown[]): unknown[] {
  const values = columnOf(c.path, records);
  if (c.kind === 'timestamp') {
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (typeof v === 'string') values[j] = instantMs(v);
    }
  } else if (c.kind === 'date') {
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (typeof v === 'string') values[j] = Date.parse(`${v}T00:00:00.000Z`) / DAY_MS;
    }
  }
  return values;
}

/**
 * hyparquet-writer's own test for a dictionary, mirrored: it samples up to this many values spread
 * over the column chunk and writes the chunk PLAIN when the sampled distinct values hold more than
 * DICTIONARY_REJECTED of the sampled bytes (its `useDictionary`).
 */
const DICTIONARY_SAMPLE = 1000;
const DICTIONARY_REJECTED = 0.9;

/**
 * Whether hyparquet-writer's sample would turn a dictionary down for these strings (or nulls): the
 * same sample and sizes (UTF-16 length plus the 4-byte length prefix), so the answer is its answer
 * and the chunk's encoding the one it would choose. An export's ids are such columns.
 */
function dictionaryRejected(values: readonly unknown[]): boolean {
  const n = values.length;
  const m = Math.min(n, DICTIONARY_SAMPLE);
  const at = (i: number): unknown => values[m === 1 ? 0 : Math.floor((i * (n - 1)) / (m - 1))];
  const size = (v: unknown): number => (typeof v === 'string' ? v.length + 4 : 0);
  let total = 0;
  for (let i = 0; i < m; i++) total += size(at(i));
  if (total === 0) return true;
  // The distinct values' share only falls as repeats are seen: once it is down to the limit, the
  // answer is known (after a hundred samples or so of a column of few values, which keeps its dictionary).
  const seen = new Set<unknown>();
  let repeats = 0;
  for (let i = 0; i < m; i++) {
    const v = at(i);
    if (!seen.has(v)) {
      seen.add(v);
      continue;
    }
    repeats += size(v);
    if ((total - repeats) / total <= DICTIONARY_REJECTED) return false;
  }
  return true;
}

const utf8 = new TextEncoder();

/**
 * Strings (or nulls) as UTF-8, each a view of one buffer for the column chunk. hyparquet-writer
 * turns the strings of a PLAIN chunk into bytes one `TextEncoder#encode` at a time, a new buffer
 * for every value: that was half of an events row group's id column, the costliest column. ASCII
 * (every id) is copied a character at a time; anything else by `encodeInto`.
 */
function utf8Views(values: readonly unknown[]): (Uint8Array | null)[] {
  let chars = 0;
  for (const v of values) if (typeof v === 'string') chars += v.length;
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  const buf = new Uint8Array(chars * 3);
  const out = new Array<Uint8Array | null>(values.length);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'string') {
      out[i] = null;
      continue;
    }
    const start = at;
    let ascii = true;
    for (let j = 0; j < v.length; j++) {
      const c = v.charCodeAt(j);
      if (c > 0x7f) {
        ascii = false;
        break;
      }
      buf[at++] = c;
    }
    if (!ascii) at = start + utf8.encodeInto(v, buf.subarray(start)).written;
    out[i] = buf.subarray(start, at);
  }
  return out;
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

type RowGroup = ParquetWriter['row_groups'][number];
type PageIndexes = ParquetWriter['pendingIndexes'][number];

/**
 * One row group encoded on its own: its bytes, and the footer's entries for it (the row group's
 * metadata and its page indexes), whose file offsets count from the start of `bytes` less 4 (as
 * if it followed the file's magic number directly). Plain data: it crosses threads as it is.
 */
export interface EncodedRowGroup {
  bytes: Uint8Array<ArrayBuffer>;
  rows: number;
  rowGroup: RowGroup;
  indexes: PageIndexes[];
}

const CREATED_BY = 'svc export (hyparquet-writer)';

export const parquetSchema = (columns: readonly Column[]): SchemaElement[] => [{ name: 'root', num_children: columns.length }, ...columns.map(parquetElement)];

/** Encodes records as row groups, each on its own, so that groups can be encoded in any thread and put together in order (ParquetFile). */
export class RowGroupEncoder {
  private readonly columns: readonly Column[];
  private readonly schema: SchemaElement[];

  constructor(columns: readonly Column[]) {
    this.columns = columns;
    this.schema = parquetSchema(columns);
  }

  encode(records: readonly unknown[]): EncodedRowGroup {
    // Column by column: each column's loop and array stay hot for the group's rows.
    const n = records.length;
    const columnData: ColumnSource[] = this.columns.map((c) => {
      const data = parquetValues(c, records);
      // Strings with no dictionary (their statistics are off: no comparisons of the bytes) as bytes already.
      if (c.kind === 'string' && dictionaryRejected(data)) return { name: c.name, data: utf8Views(data), nullable: c.nullable, encoding: 'PLAIN', statistics: false };
      return { name: c.name, data, nullable: c.nullable, statistics: c.kind !== 'json' && c.kind !== 'string' };
    });
    // Sized for a typical group (an events group is about 130 KB), so that it seldom grows by copying.
    const writer = new ByteWriter(1 << 18);
    // A writer of its own per group: it starts with the 4-byte magic number, which is left out.
    const group = new ParquetWriter({ writer, schema: this.schema, createdBy: CREATED_BY });
    if (group.write({ columnData, rowGroupSize: n })) throw new Error('parquet writer went asynchronous');
    const [rowGroup] = group.row_groups;
    if (!rowGroup) throw new Error('parquet writer wrote no row group');
    return { bytes: new Uint8Array(writer.buffer.slice(4, writer.index)), rows: n, rowGroup, indexes: group.pendingIndexes };
  }
}

/** Moves a row group's file offsets by `by` bytes: from where it was encoded to where it lands in the file. */
function moveOffsets(g: EncodedRowGroup, by: bigint): void {
  for (const c of g.rowGroup.columns) {
    c.file_offset += by;
    const m = c.meta_data;
    if (!m) continue;
    m.data_page_offset += by;
    if (m.dictionary_page_offset !== undefined) m.dictionary_page_offset += by;
    if (m.index_page_offset !== undefined) m.index_page_offset += by;
  }
  // The page indexes are written after the last group (ParquetWriter.finish); their chunk objects
  // are the row group's own, so only the pages' own offsets are left to move.
  for (const i of g.indexes) for (const p of i.offsetIndex?.page_locations ?? []) p.offset += by;
}

/**
 * A Parquet file put together from row groups encoded apart (RowGroupEncoder), in the order they
 * are added: the magic number, each group's bytes as it comes, then the footer (hyparquet-writer's
 * own, from the groups' metadata with their offsets moved to where they landed). Only the footer's
 * entries (a few hundred bytes a group) stay until the end.
 */
export class ParquetFile {
  private readonly writer: ChunkWriter;
  private readonly file: ParquetWriter;

  constructor(columns: readonly Column[], out: (bytes: Buffer) => void) {
    this.writer = new ChunkWriter(out);
    this.file = new ParquetWriter({ writer: this.writer, schema: parquetSchema(columns), createdBy: CREATED_BY });
  }

  add(g: EncodedRowGroup): void {
    moveOffsets(g, BigInt(this.writer.offset - 4));
    this.writer.appendBytes(g.bytes);
    this.file.row_groups.push(g.rowGroup);
    this.file.num_rows += BigInt(g.rows);
    this.file.pendingIndexes.push(...g.indexes);
    this.writer.flush();
  }

  finish(): void {
    if (this.file.finish()) throw new Error('parquet writer went asynchronous');
  }
}

/**
 * Parquet on the thread that holds it: rows gathered PARQUET_ROW_GROUP at a time, each group
 * encoded and passed on. Memory is one row group whatever the export's size. An export encodes its
 * groups in threads of their own instead (encoder-thread.ts), the same bytes.
 */
export class ParquetEncoder extends RecordEncoder {
  private readonly groups: RowGroupEncoder;
  private readonly file: ParquetFile;
  private records: unknown[] = [];

  constructor(columns: readonly Column[]) {
    super();
    this.groups = new RowGroupEncoder(columns);
    this.file = new ParquetFile(columns, (b) => this.push(b));
  }

  protected encode(records: unknown[]): void {
    for (const r of records) {
      this.records.push(r);
      if (this.records.length === PARQUET_ROW_GROUP) this.group();
    }
  }

  private group(): void {
    if (this.records.length === 0) return;
    this.file.add(this.groups.encode(this.records));
    this.records = [];
  }

  protected finishRecords(): void {
    this.group();
    this.file.finish();
  }
}
