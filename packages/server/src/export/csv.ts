import { stringify } from 'csv-stringify/sync';
import { getterOf, RecordEncoder, type Column, type ColumnKind, type Getter } from './records.ts';

/**
 * CSV from an export's records (docs/decisions.md "Export formats"). Loaded by the encoder thread
 * as it is, like records.ts (see there): erasable TypeScript, no project imports but by `.ts` name.
 */

/** Characters that make a CSV field quoted (RFC 4180 section 2): the delimiter, the quote, CR and LF. */
const CSV_SPECIAL = /[",\r\n]/;

/**
 * The first characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as
 * a formula: OWASP "CSV Injection" lists `=`, `+`, `-`, `@`, tab and carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
/** Text that is a plain decimal number: a spreadsheet reads it as that number, never as a formula. */
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A text cell as a spreadsheet may open it (docs/decisions.md "Export formats"): one that would
 * start a formula gets a single quote in front, as OWASP recommends, which spreadsheets show as
 * text and never evaluate. Text that is a plain number (`-2`) is left as it is, and numbers are
 * never text here: a negative number stays a number.
 */
export function spreadsheetSafe(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/**
 * A CSV field's text: the NDJSON value as written there, made spreadsheet-safe (spreadsheetSafe),
 * quoted (its quotes doubled) when it holds a comma, a quote, CR or LF; an empty string is `""`
 * and null or absent an empty field, so the two stay apart. Otherwise the fields csv-stringify
 * writes with `quoted_empty` for empty strings only (the header is still written by it), without
 * its per-field option handling.
 */
function csvField(kind: ColumnKind, v: unknown): string {
  if (v === null || v === undefined) return '';
  // A number never holds a special character, is never empty and is never a formula.
  if (typeof v === 'number' && kind !== 'json') return String(v);
  const text = spreadsheetSafe(kind === 'json' || typeof v === 'object' ? JSON.stringify(v) : String(v));
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
  private readonly columns: readonly Column[];
  private readonly getters: readonly Getter[];

  constructor(columns: readonly Column[]) {
    super();
    this.columns = columns;
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
