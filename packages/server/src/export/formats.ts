import type { Transform } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import { Competition, Event, Play, type ExportEntity, type ExportFormat } from '@svc/schema';
import { CsvThread, ParquetThreads } from './encoder-thread.js';
import type { Column, ColumnKind } from './records.js';

export { csvHeader, csvRows, CsvEncoder } from './csv.js';
export { PARQUET_ROW_GROUP, ParquetEncoder } from './parquet.js';
export { CsvThread, ParquetThreads } from './encoder-thread.js';
export type { Column, ColumnKind } from './records.js';

/**
 * CSV and Parquet exports (docs/decisions.md "Export formats"). Both are made from the NDJSON
 * export's lines: the same rows in the same order, each line parsed once and written as a row, so
 * a CSV or Parquet file holds exactly the values of the NDJSON one. Nested objects become columns
 * named by their path with dots (`confidence.agreement`); arrays and maps (a competition's
 * `competitors`, a play's `state`) stay one column holding their JSON. The columns come from the
 * record's schema, so a field added to the schema is a column here without another list to keep.
 */

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

/**
 * The columns of a record schema, in the schema's field order. A union of objects (an `Event` is a
 * scoring event or a status change) has the columns of all its members: the first member's fields,
 * then each later member's new ones, so no member's field is lost (the NDJSON line of any record
 * has a column for each of its fields). A field some member lacks is nullable; one whose members
 * disagree on its kind is JSON.
 */
export function columnsOf(schema: TSchema): Column[] {
  const out: Column[] = [];
  const walk = (node: SchemaNode, path: string[], nullable: boolean) => {
    const members = node.anyOf ?? [node];
    const kinds = members.map(scalarKind);
    const isNullable = nullable || kinds.includes('null');
    const rest = [...new Set(kinds.filter((k) => k !== 'null'))];
    if (rest.length === 1 && rest[0] === 'object') {
      const objects = members.filter((m) => scalarKind(m) === 'object');
      // Each field's schema in every member that has it, in the order fields first appear.
      const fields = new Map<string, { nodes: SchemaNode[]; requiredInAll: boolean }>();
      for (const obj of objects) {
        const required = new Set(obj.required ?? []);
        for (const [key, child] of Object.entries(obj.properties ?? {})) {
          const f = fields.get(key) ?? { nodes: [], requiredInAll: true };
          f.nodes.push(child);
          f.requiredInAll &&= required.has(key);
          fields.set(key, f);
        }
      }
      for (const [key, f] of fields) {
        const inAll = f.nodes.length === objects.length;
        const child: SchemaNode = f.nodes.length === 1 ? f.nodes[0] : { anyOf: f.nodes.flatMap((n) => n.anyOf ?? [n]) };
        walk(child, [...path, key], isNullable || !inAll || !f.requiredInAll);
      }
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

export interface FormatInfo {
  contentType: string;
  extension: string;
  /** Whether `Accept-Encoding: gzip` applies: Parquet compresses its pages itself. */
  gzip: boolean;
  encoder?: (entity: ExportEntity) => Transform;
}

export const FORMATS: Record<ExportFormat, FormatInfo> = {
  ndjson: { contentType: 'application/x-ndjson', extension: 'ndjson', gzip: true },
  csv: { contentType: 'text/csv; charset=utf-8; header=present', extension: 'csv', gzip: true, encoder: (e) => new CsvThread(EXPORT_COLUMNS[e]) },
  parquet: { contentType: 'application/vnd.apache.parquet', extension: 'parquet', gzip: false, encoder: (e) => new ParquetThreads(EXPORT_COLUMNS[e]) },
};
