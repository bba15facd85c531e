import { describe, expect, it } from 'vitest';
import { CopyFormatError, linesFromBinaryCopy, type CopyFormatReason } from '../src/store/sql/copy-lines.js';
import { eventJson } from '../src/store/events/json.js';

/** A binary COPY of (seq bigint, json_tail text) as PostgreSQL writes it (its docs, "Binary Format"). */
function binaryCopy(rows: { seq: number | bigint; tail: string | null }[], opts: { flags?: number; extension?: Buffer; fields?: number; seqWidth?: number } = {}): Buffer {
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')];
  const int32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const flags = Buffer.alloc(4);
  flags.writeUInt32BE(opts.flags ?? 0);
  parts.push(flags, int32(opts.extension?.length ?? 0));
  if (opts.extension) parts.push(opts.extension);
  for (const r of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(opts.fields ?? 2);
    const seq = Buffer.alloc(opts.seqWidth ?? 8);
    if ((opts.seqWidth ?? 8) === 8) seq.writeBigInt64BE(BigInt(r.seq));
    parts.push(count, int32(seq.length), seq);
    if (r.tail === null) parts.push(int32(-1));
    else {
      const tail = Buffer.from(r.tail, 'utf8');
      parts.push(int32(tail.length), tail);
    }
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  parts.push(trailer);
  return Buffer.concat(parts);
}

const reasonOf = (input: Buffer): CopyFormatReason | 'ok' => {
  try {
    linesFromBinaryCopy(input);
    return 'ok';
  } catch (err) {
    if (err instanceof CopyFormatError) return err.reason;
    throw err;
  }
};

describe('export lines from a binary COPY', () => {
  it('writes each row as eventJson does, ids padded to 12 digits and never cut, text as UTF-8 bytes untouched', () => {
    const rows = [
      { seq: 1, tail: ',"type":"score"}' },
      { seq: 42, tail: ',"team":"Côte d\'Ivoire 😀","s":"a\\"b\\\\n\u2028"}' },
      { seq: 999_999_999_999, tail: '}' },
      { seq: 1_000_000_000_000, tail: ',"x":1}' },
      { seq: Number.MAX_SAFE_INTEGER, tail: ',"y":null}' },
    ];
    const out = linesFromBinaryCopy(binaryCopy(rows));
    expect(out.bytes.toString('utf8')).toBe(rows.map((r) => `${eventJson(r.seq, r.tail)}\n`).join(''));
    expect(out.lines).toBe(5);
    expect(out.lastSeq).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reads a COPY with no row as no line, and skips a header extension', () => {
    expect(linesFromBinaryCopy(binaryCopy([]))).toEqual({ bytes: Buffer.alloc(0), lines: 0, lastSeq: null });
    const withExtension = linesFromBinaryCopy(binaryCopy([{ seq: 7, tail: '}' }], { extension: Buffer.from('future') }));
    expect(withExtension.bytes.toString()).toBe(`${eventJson(7, '}')}\n`);
  });

  it('refuses every malformed input with its reason', () => {
    const good = binaryCopy([{ seq: 1, tail: '}' }, { seq: 2, tail: '}' }]);
    const cases: [Buffer, CopyFormatReason][] = [
      [Buffer.concat([Buffer.from('PGCOPZ'), good.subarray(6)]), 'bad_signature'],
      [binaryCopy([{ seq: 1, tail: '}' }], { flags: 1 << 16 }), 'unsupported_flags'],
      [binaryCopy([{ seq: 1, tail: '}' }], { fields: 3 }), 'unexpected_field_count'],
      [binaryCopy([{ seq: 1, tail: '}' }], { seqWidth: 4 }), 'unexpected_seq_width'],
      [binaryCopy([{ seq: 1, tail: null }]), 'null_field'],
      [binaryCopy([{ seq: -1n, tail: '}' }]), 'seq_out_of_range'],
      [binaryCopy([{ seq: 2n ** 53n, tail: '}' }]), 'seq_out_of_range'],
      [binaryCopy([{ seq: 2, tail: '}' }, { seq: 2, tail: '}' }]), 'seq_not_increasing'],
      [binaryCopy([{ seq: 3, tail: '}' }, { seq: 1, tail: '}' }]), 'seq_not_increasing'],
      [Buffer.concat([good, Buffer.from([0])]), 'trailing_bytes'],
      [Buffer.alloc(0), 'truncated'],
    ];
    for (const [input, reason] of cases) expect(reasonOf(input)).toBe(reason);
    // A null seq: the seq's length field says -1.
    const nullSeq = Buffer.from(good);
    nullSeq.writeInt32BE(-1, 19 + 2);
    expect(reasonOf(nullSeq)).toBe('null_field');
  });

  it('refuses every proper prefix of a valid COPY as truncated: a cut stream never yields a short page', () => {
    const good = binaryCopy([{ seq: 1, tail: ',"a":"é"}' }, { seq: 5, tail: '}' }]);
    for (let n = 0; n < good.length; n++) expect(reasonOf(good.subarray(0, n))).toBe('truncated');
    expect(reasonOf(good)).toBe('ok');
  });

  it('fuzzed: random bytes, flipped bytes and lengths either decode or fail with a reason, never another error', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const base = binaryCopy([{ seq: 10, tail: ',"a":1}' }, { seq: 11, tail: ',"b":"x"}' }, { seq: 4_000_000_000, tail: '}' }]);
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const input = Buffer.from(base);
      const flips = 1 + Math.floor(random() * 4);
      for (let k = 0; k < flips; k++) input[Math.floor(random() * input.length)] = Math.floor(random() * 256);
      seen.add(reasonOf(input));
    }
    for (let i = 0; i < 2_000; i++) {
      const input = Buffer.alloc(Math.floor(random() * 64));
      for (let k = 0; k < input.length; k++) input[k] = Math.floor(random() * 256);
      seen.add(reasonOf(input));
    }
    // The fuzzing reached well past the signature check.
    expect(seen.has('ok')).toBe(true);
    expect(seen.size).toBeGreaterThanOrEqual(5);
  });
});
