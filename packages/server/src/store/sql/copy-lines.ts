/**
 * Export lines from the bytes of a PostgreSQL binary COPY of `(seq bigint, json_tail text)`
 * (docs/decisions.md "Export"): each row becomes `{"id":"evt_<seq>"` + json_tail + `\n`,
 * byte for byte what `eventJson` writes, without the text ever being decoded in JavaScript.
 *
 * The format (PostgreSQL's documentation of COPY, "Binary Format"): an 11-byte signature, a
 * 32-bit flags field and a 32-bit header-extension length (followed by that many bytes); then per
 * row a 16-bit field count and per field a 32-bit length (-1 for NULL) and the bytes; then a
 * 16-bit -1. Integers are big-endian; a bigint field is 8 bytes; text is in the client encoding,
 * which node-postgres sets to UTF-8.
 *
 * Pure and import-free: every malformed input fails with a typed reason (fuzzed in
 * test/copy-lines.test.ts), never with a partial page.
 */

export type CopyFormatReason =
  | 'bad_signature'
  | 'unsupported_flags'
  | 'truncated'
  | 'unexpected_field_count'
  | 'unexpected_seq_width'
  | 'null_field'
  | 'seq_out_of_range'
  | 'seq_not_increasing'
  | 'trailing_bytes';

export class CopyFormatError extends Error {
  constructor(readonly reason: CopyFormatReason) {
    super(`binary COPY output not as expected: ${reason}`);
    this.name = 'CopyFormatError';
  }
}

export interface CopiedLines {
  /** The lines, each ending in a newline. */
  bytes: Buffer;
  lines: number;
  /** The last row's seq; null when there was no row. */
  lastSeq: number | null;
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** `{"id":"evt_`: an event id is `evt_` and its seq, zero-padded to 12 digits (never cut). */
const LINE_HEAD = Buffer.from('{"id":"evt_', 'latin1');
const ID_DIGITS = 12;
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const ZERO = 0x30;
/** Bit 16 of the flags says OIDs are included; bits 17–31 are reserved and must be zero. */
const CRITICAL_FLAGS = 0xffff0000;

interface Row {
  seq: number;
  tailStart: number;
  tailLength: number;
}

/** The rows' positions in `input`, checked against the format; no bytes are copied yet. */
function scan(input: Buffer): Row[] {
  const need = (at: number, n: number) => {
    if (at + n > input.length) throw new CopyFormatError('truncated');
  };
  need(0, SIGNATURE.length + 8);
  if (!input.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new CopyFormatError('bad_signature');
  let at = SIGNATURE.length;
  if ((input.readUInt32BE(at) & CRITICAL_FLAGS) !== 0) throw new CopyFormatError('unsupported_flags');
  const extension = input.readUInt32BE(at + 4);
  at += 8;
  need(at, extension);
  at += extension;
  const rows: Row[] = [];
  let previous = -1;
  for (;;) {
    need(at, 2);
    const fields = input.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    if (fields !== 2) throw new CopyFormatError('unexpected_field_count');
    need(at, 4);
    const seqWidth = input.readInt32BE(at);
    if (seqWidth === -1) throw new CopyFormatError('null_field');
    if (seqWidth !== 8) throw new CopyFormatError('unexpected_seq_width');
    need(at + 4, 8 + 4);
    const high = input.readInt32BE(at + 4);
    const low = input.readUInt32BE(at + 8);
    // A seq is positive and below 2^53: the high word is 0 to 2^21 - 1.
    if (high < 0 || high >= 0x200000) throw new CopyFormatError('seq_out_of_range');
    const seq = high * 0x100000000 + low;
    if (seq <= previous) throw new CopyFormatError('seq_not_increasing');
    previous = seq;
    const tailLength = input.readInt32BE(at + 12);
    if (tailLength === -1) throw new CopyFormatError('null_field');
    if (tailLength < 0) throw new CopyFormatError('truncated');
    const tailStart = at + 16;
    need(tailStart, tailLength);
    rows.push({ seq, tailStart, tailLength });
    at = tailStart + tailLength;
  }
  if (at !== input.length) throw new CopyFormatError('trailing_bytes');
  return rows;
}

const digitsOf = (seq: number): number => Math.max(ID_DIGITS, String(seq).length);

/** The export lines of a binary COPY's rows (see the module comment); throws CopyFormatError. */
export function linesFromBinaryCopy(input: Buffer): CopiedLines {
  const rows = scan(input);
  let size = 0;
  for (const r of rows) size += LINE_HEAD.length + digitsOf(r.seq) + 1 + r.tailLength + 1;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (const r of rows) {
    o += LINE_HEAD.copy(out, o);
    const digits = String(r.seq);
    for (let pad = digits.length; pad < ID_DIGITS; pad++) out[o++] = ZERO;
    o += out.write(digits, o, 'latin1');
    out[o++] = QUOTE;
    o += input.copy(out, o, r.tailStart, r.tailStart + r.tailLength);
    out[o++] = NEWLINE;
  }
  return { bytes: out, lines: rows.length, lastSeq: rows.length > 0 ? rows[rows.length - 1].seq : null };
}
