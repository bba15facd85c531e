import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'csv-stringify/sync';
import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { Competition, Event, Play, type ExportEntity, type ExportFormat } from '@svc/schema';

/**
 * CSV and Parquet exports (docs/decisions.md "Export formats"). Both are made from the NDJSON
 * export's lines: the same rows in the same order, each line parsed once and written as a row, so
 * a CSV or Parquet file holds exactly the values of the NDJSON one. Nested objects become columns
 * named by their path with dots (`confidence.agreement`); arrays and maps (a competition's
 * `competitors`, a play's `state`) stay one column holding their JSON. The columns come from the
 * record's schema, so a field added to the schema is a column here without another list to keep.
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

/** Fields holding an instant (ISO 8601 UTC) and a calendar date: Parquet TIMESTAMP (UTC, ms) and DATE. */
const TIMESTAMP_FIELDS = new Set(['ts', 'start_time']);
const DATE_FIELDS = new Set(['date']);

/** The parts of a JSON Schema (TypeBox's output) this reads. */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  patternProperties?: object;
  anyOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
  [keyword: string]: unknown;
}

function scalarKind(node: SchemaNode): ColumnKind | 'null' | 'object' {
  if (node.const !== undefined || node.enum !== undefined) return 'string';
  switch (node.type) {
    case 'null':
      return 'null';
    case 'string':
      return 'string';
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return node.patternProperties !== undefined || node.properties === undefined ? 'json' : 'object';
    default:
      return 'json';
  }
}

/** The columns of a record schema, in the schema's field order. */
export function columnsOf(schema: TSchema): Column[] {
  const out: Column[] = [];
  const walk = (node: SchemaNode, path: string[], nullable: boolean) => {
    const members = node.anyOf ?? [node];
    const kinds = members.map(scalarKind);
    const isNullable = nullable || kinds.includes('null');
    const rest = [...new Set(kinds.filter((k) => k !== 'null'))];
    if (rest.length === 1 && rest[0] === 'object') {
      const obj = members.find((m) => scalarKind(m) === 'object');
      const required = new Set(obj?.required ?? []);
      for (const [key, child] of Object.entries(obj?.properties ?? {})) walk(child, [...path, key], isNullable || !required.has(key));
      return;
    }
    const field = path[path.length - 1];
    let kind: ColumnKind = rest.length === 1 && rest[0] !== 'object' ? rest[0] : 'json';
    if (kind === 'string' && TIMESTAMP_FIELDS.has(field)) kind = 'timestamp';
    if (kind === 'string' && DATE_FIELDS.has(field)) kind = 'date';
    out.push({ name: path.join('.'), path, kind, nullable: isNullable });
  };
  walk(schema, [], false);
  return out;
}

export const EXPORT_COLUMNS: Record<ExportEntity, readonly Column[]> = {
  events: columnsOf(Event),
  plays: columnsOf(Play),
  competitions: columnsOf(Competition),
};

const isObject = (v: unknown): v is { [key: string]: unknown } => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A function reading a column's value from a record, undefined where the record leaves it out.
 * Made once per column rather than walking the path for every cell: the encoders call it once per
 * cell of an export, millions of times (bench/RESULTS.md "Export formats").
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
function parseLines(lines: string): unknown[] {
  const parsed: unknown = JSON.parse(`[${lines.replaceAll('\n', ',')}]`);
  if (!Array.isArray(parsed)) throw new Error('export lines did not parse as records');
  return parsed;
}

/**
 * Splits NDJSON text (in chunks cut anywhere, even inside a UTF-8 character) into parsed records
 * and hands each chunk's records to `encode`; `end` runs once the input is over.
 */
abstract class RecordEncoder extends Transform {
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

/** Characters that make a CSV field quoted (RFC 4180 section 2): the delimiter, the quote, CR and LF. */
const CSV_SPECIAL = /[",\r\n]/;

/**
 * A CSV field's text: the NDJSON value as written there, quoted (its quotes doubled) when it holds
 * a comma, a quote, CR or LF; an empty string is `""` and null or absent an empty field, so the
 * two stay apart. The same fields csv-stringify writes with `quoted_empty` for empty strings only
 * (the header is still written by it), without its per-field option handling.
 */
function csvField(kind: ColumnKind, v: unknown): string {
  if (v === null || v === undefined) return '';
  // A number never holds a special character and is never empty.
  if (typeof v === 'number' && kind !== 'json') return String(v);
  const text = kind === 'json' || typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (text === '') return '""';
  return CSV_SPECIAL.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV header line of these columns. */
export const csvHeader = (columns: readonly Column[]): string => stringify([columns.map((c) => c.name)], { record_delimiter: 'windows' });

/** Records as CSV lines (each ending in CRLF). */
export function csvRows(columns: readonly Column[], records: readonly unknown[]): string {
  return csvRowsWith(columns, columns.map((c) => getterOf(c.path)), records);
}

function csvRowsWith(columns: readonly Column[], getters: readonly Getter[], records: readonly unknown[]): string {
  const last = columns.length - 1;
  let out = '';
  for (const r of records) {
    for (let i = 0; i < last; i++) out += csvField(columns[i].kind, getters[i](r)) + ',';
    out += csvField(columns[last].kind, getters[last](r)) + '\r\n';
  }
  return out;
}

/**
 * CSV (RFC 4180): a header row of column names, CRLF line ends, a field quoted when it holds a
 * comma, a quote (doubled), CR or LF. Null is an empty field; an empty string is `""`, so the two
 * stay apart. Rows by csvField, the header by csv-stringify (docs/decisions.md "Export formats").
 */
export class CsvEncoder extends RecordEncoder {
  private headed = false;
  private readonly getters: readonly Getter[];

  constructor(private readonly columns: readonly Column[]) {
    super();
    this.getters = columns.map((c) => getterOf(c.path));
  }

  private header(): void {
    if (this.headed) return;
    this.headed = true;
    this.push(csvHeader(this.columns));
  }

  protected encode(records: unknown[]): void {
    this.header();
    if (records.length > 0) this.push(csvRowsWith(this.columns, this.getters, records));
  }

  protected finishRecords(): void {
    this.header();
  }
}

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

/** A record's value as the Parquet writer takes it for the column's type, made once per column. */
function parquetGetter(c: Column): Getter {
  const get = getterOf(c.path);
  switch (c.kind) {
    case 'timestamp':
      return (r) => {
        const v = get(r);
        if (v === null || v === undefined) return null;
        return typeof v === 'string' ? Date.parse(v) : v;
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
  constructor(private readonly out: (bytes: Buffer) => void) {
    super(1 << 16);
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
 */
export class ParquetEncoder extends RecordEncoder {
  private readonly writer: ParquetWriter;
  private readonly getters: readonly Getter[];
  private values: unknown[][];
  private rows = 0;

  constructor(private readonly columns: readonly Column[]) {
    super();
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

export interface FormatInfo {
  contentType: string;
  extension: string;
  /** Whether `Accept-Encoding: gzip` applies: Parquet compresses its pages itself. */
  gzip: boolean;
  encoder?: (entity: ExportEntity) => Transform;
}

export const FORMATS: Record<ExportFormat, FormatInfo> = {
  ndjson: { contentType: 'application/x-ndjson', extension: 'ndjson', gzip: true },
  csv: { contentType: 'text/csv; charset=utf-8; header=present', extension: 'csv', gzip: true, encoder: (e) => new CsvEncoder(EXPORT_COLUMNS[e]) },
  parquet: { contentType: 'application/vnd.apache.parquet', extension: 'parquet', gzip: false, encoder: (e) => new ParquetEncoder(EXPORT_COLUMNS[e]) },
};
