/**
 * PostgreSQL's COPY text format, and a canonical form of a row that both engines' values reduce
 * to, for `svc migrate-store` (docs/operations.md "From one node to a cluster").
 *
 * The format (PostgreSQL's documentation of COPY, "Text Format"): one line per row, fields split
 * by a tab, `\N` for NULL; inside a field a backslash, tab, newline, carriage return, backspace,
 * form feed and vertical tab are written as `\\`, `\t`, `\n`, `\r`, `\b`, `\f`, `\v`. These are
 * exactly the characters PostgreSQL escapes when it writes COPY TO, so a value written here and
 * one read back are spelt the same.
 *
 * Pure and import-free but for node:crypto.
 */
import crypto from 'node:crypto';

/** How a column's values are compared and written: what the PostgreSQL column's type asks for. */
export type ColumnKind = 'int' | 'float' | 'text' | 'bool' | 'bytes';

/** A value as SQLite hands it over with safe integers: INTEGER as bigint, REAL as number. */
export type SourceValue = bigint | number | string | Buffer | null;

export class CopyValueError extends Error {}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v' };
const NEEDS_ESCAPE = /[\\\t\n\r\b\f\v]/;
const ESCAPE_ALL = /[\\\t\n\r\b\f\v]/g;
const UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r', b: '\b', f: '\f', v: '\v' };

export const NULL_FIELD = '\\N';

/** A text value as one COPY field. */
export function escapeText(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_ALL, (c) => ESCAPES[c]) : s;
}

/**
 * A double as its shortest text that reads back to the same double, which PostgreSQL's float8
 * input rounds correctly; minus zero and the non-finite values as PostgreSQL spells them.
 */
export function floatText(n: number): string {
  if (Object.is(n, -0)) return '-0';
  return String(n);
}

/** What the value is as an integer column holds it, exactly, or undefined when it is none. */
function integerText(v: bigint | number | string): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isSafeInteger(v) ? String(v) : undefined;
  return /^-?\d+$/.test(v) ? BigInt(v).toString() : undefined;
}

/**
 * One value of a SQLite row as the canonical text of its column kind (not yet escaped): the
 * integer in decimal, the double in its shortest form, a boolean as 0 or 1, bytes in hex, text
 * as it is. Null stays null. A value the kind cannot hold is an error naming it.
 */
export function canonicalOf(v: SourceValue, kind: ColumnKind): string | null {
  if (v === null) return null;
  switch (kind) {
    case 'text':
      if (Buffer.isBuffer(v)) throw new CopyValueError('a blob in a text column');
      return typeof v === 'number' ? floatText(v) : String(v);
    case 'int': {
      if (Buffer.isBuffer(v)) throw new CopyValueError('a blob in an integer column');
      const t = integerText(v);
      if (t === undefined) throw new CopyValueError(`'${String(v).slice(0, 40)}' in an integer column`);
      return t;
    }
    case 'float': {
      if (Buffer.isBuffer(v)) throw new CopyValueError('a blob in a float column');
      const n = Number(v);
      if (typeof v === 'string' && (v.trim() === '' || (Number.isNaN(n) && v !== 'NaN'))) throw new CopyValueError(`'${v.slice(0, 40)}' in a float column`);
      return floatText(n);
    }
    case 'bool': {
      if (Buffer.isBuffer(v)) throw new CopyValueError('a blob in a boolean column');
      const t = integerText(v);
      if (t !== '0' && t !== '1') throw new CopyValueError(`'${String(v).slice(0, 40)}' in a boolean column`);
      return t;
    }
    case 'bytes':
      if (!Buffer.isBuffer(v)) throw new CopyValueError('a non-blob in a bytea column');
      return v.toString('hex');
  }
}

/** A canonical value as a COPY field for its kind: what PostgreSQL's COPY FROM reads back as the value. */
export function copyField(canonical: string | null, kind: ColumnKind): string {
  if (canonical === null) return NULL_FIELD;
  // bytea's hex input is `\x…`, whose backslash COPY itself wants doubled.
  if (kind === 'bytes') return `\\\\x${canonical}`;
  return kind === 'text' ? escapeText(canonical) : canonical;
}

/** The fields of one COPY TO text line (without its newline), unescaped, `\N` as null. */
export function decodeCopyLine(line: string): (string | null)[] {
  // A tab inside a value is written `\t`, so every raw tab splits two fields.
  return line.split('\t').map((field) => {
    if (field === NULL_FIELD) return null;
    if (!field.includes('\\')) return field;
    return field.replace(/\\(.?)/g, (_, c: string) => {
      const un = UNESCAPES[c];
      if (un === undefined) throw new CopyValueError(`an escape '\\${c}' COPY does not write`);
      return un;
    });
  });
}

/**
 * The canonical text of a value PostgreSQL's COPY TO wrote for a column of `kind`: the same text
 * `canonicalOf` makes of the SQLite value it was copied from, when the two hold the same value.
 */
export function canonicalOfCopied(text: string | null, kind: ColumnKind): string | null {
  if (text === null) return null;
  switch (kind) {
    case 'text':
      return text;
    case 'int':
      return BigInt(text).toString();
    case 'float':
      return floatText(Number(text));
    case 'bool':
      return text === 't' ? '1' : text === 'f' ? '0' : text;
    case 'bytes':
      return text.startsWith('\\x') ? text.slice(2) : text;
  }
}

/** A canonical value as it stands in a canonical line: null as `\N`, text escaped as COPY escapes it. */
const lineField = (v: string | null): string => (v === null ? NULL_FIELD : escapeText(v));

/** The canonical line of a SQLite row: its values' canonical texts (canonicalOf), as COPY fields. */
export function canonicalLineOf(values: readonly SourceValue[], kinds: readonly ColumnKind[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i > 0 ? '\t' : '') + lineField(canonicalOf(values[i], kinds[i]));
  return line;
}

/**
 * The canonical line of a line PostgreSQL's COPY TO wrote: the same text `canonicalLineOf` makes
 * of the SQLite row it was copied from. Integers and text PostgreSQL already writes in the
 * canonical form, escapes included, so a table of those alone is hashed as it arrives; only
 * doubles (PostgreSQL spells exponents `1e-07`), booleans and bytes are rewritten.
 */
export function canonicalLineOfCopied(line: string, kinds: readonly ColumnKind[]): string {
  if (kinds.every((k) => k === 'text' || k === 'int')) return line;
  const fields = line.split('\t');
  for (let i = 0; i < fields.length; i++) {
    const k = kinds[i];
    if (k === 'text' || k === 'int' || fields[i] === NULL_FIELD) continue;
    // Doubles, booleans and hex hold no character COPY escapes, but for bytea's leading backslash.
    fields[i] = lineField(canonicalOfCopied(k === 'bytes' ? fields[i].replace(/^\\\\/, '\\') : fields[i], k));
  }
  return fields.join('\t');
}

/**
 * A table's rows summed up: the count, and a SHA-256 over their canonical lines (fields in the
 * column order given, escaped as COPY escapes them, a newline after each) in the order they come,
 * which both sides give as the table's primary-key order. A changed, missing, doubled or moved
 * value changes it. One running hash per table: a hash per row cost several times the reading.
 */
export class RowChecksum {
  rows = 0;
  private readonly hash = crypto.createHash('sha256');
  private pending = '';

  /** A row of canonical values (null for null). */
  add(canonicalRow: readonly (string | null)[]): void {
    this.addLine(canonicalRow.map(lineField).join('\t'));
  }

  /** A row as its canonical line (canonicalLineOf, canonicalLineOfCopied). */
  addLine(line: string): void {
    this.pending += `${line}\n`;
    // Handed to the hash in pieces of some size: one call per row is most of its cost.
    if (this.pending.length > 65_536) this.flush();
    this.rows++;
  }

  private flush(): void {
    this.hash.update(this.pending);
    this.pending = '';
  }

  /** The digest as 64 hex digits (once: the sum ends here). */
  hex(): string {
    this.flush();
    return this.hash.digest('hex');
  }
}

/** The kind of a PostgreSQL column from its `information_schema` data type, or null for one not handled. */
export function kindOfPgType(dataType: string): ColumnKind | null {
  switch (dataType) {
    case 'smallint':
    case 'integer':
    case 'bigint':
      return 'int';
    case 'real':
    case 'double precision':
      return 'float';
    case 'text':
    case 'character varying':
    case 'character':
      return 'text';
    case 'boolean':
      return 'bool';
    case 'bytea':
      return 'bytes';
    default:
      return null;
  }
}
