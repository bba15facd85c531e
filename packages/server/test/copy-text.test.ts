// The COPY text format and the canonical rows of `svc migrate-store` (store/transfer/copy-text.ts):
// what is written reads back as the same value, PostgreSQL's own spellings canonicalise to the
// SQLite value's, and the table checksum changes with a changed, missing, doubled or moved row.
import { describe, expect, it } from 'vitest';
import {
  canonicalLineOf,
  canonicalLineOfCopied,
  canonicalOf,
  canonicalOfCopied,
  copyField,
  CopyValueError,
  decodeCopyLine,
  escapeText,
  floatText,
  RowChecksum,
  type ColumnKind,
} from '../src/store/transfer/copy-text.js';

/** A deterministic generator, so a failure names a reproducible case. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const NASTY = ['\\', '\t', '\n', '\r', '\b', '\f', '\v', '\\N', 'N', '"', "'", '\0x', 'é', '⚽', '\u2028', ' ', ''];

describe('COPY text', () => {
  it('a line of escaped fields decodes to the values it was made of, \\N to null', () => {
    const rnd = random(7);
    for (let n = 0; n < 2000; n++) {
      const fields: (string | null)[] = [];
      const count = 1 + Math.floor(rnd() * 6);
      for (let i = 0; i < count; i++) {
        if (rnd() < 0.15) {
          fields.push(null);
          continue;
        }
        let s = '';
        const len = Math.floor(rnd() * 6);
        for (let j = 0; j < len; j++) s += NASTY[Math.floor(rnd() * NASTY.length)];
        fields.push(s);
      }
      const line = fields.map((f) => (f === null ? '\\N' : escapeText(f))).join('\t');
      expect(line).not.toMatch(/\n/);
      expect(decodeCopyLine(line), JSON.stringify(fields)).toEqual(fields);
    }
  });

  it('refuses an escape PostgreSQL does not write', () => {
    expect(() => decodeCopyLine('a\\qb')).toThrow(CopyValueError);
  });

  it('doubles read back exactly in their shortest form; integers exactly past 2^53', () => {
    const rnd = random(11);
    for (let n = 0; n < 5000; n++) {
      const x = (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
      expect(Number(floatText(x))).toBe(x);
      expect(canonicalOfCopied(floatText(x), 'float')).toBe(canonicalOf(x, 'float'));
    }
    expect(floatText(-0)).toBe('-0');
    // PostgreSQL's spellings of the same doubles.
    expect(canonicalOfCopied('1e-07', 'float')).toBe(canonicalOf(1e-7, 'float'));
    expect(canonicalOfCopied('1e+21', 'float')).toBe(canonicalOf(1e21, 'float'));
    expect(canonicalOfCopied('0.30000000000000004', 'float')).toBe(canonicalOf(0.1 + 0.2, 'float'));
    expect(canonicalOf(9007199254740993n, 'int')).toBe('9007199254740993');
    expect(canonicalOfCopied('9007199254740993', 'int')).toBe('9007199254740993');
    // A REAL of an integral value in a float column (SQLite's REAL affinity stores 1 as 1.0).
    expect(canonicalOf(1, 'float')).toBe(canonicalOfCopied('1', 'float'));
  });

  it('booleans and bytes meet in one canonical form', () => {
    expect(canonicalOf(1n, 'bool')).toBe(canonicalOfCopied('t', 'bool'));
    expect(canonicalOf(0n, 'bool')).toBe(canonicalOfCopied('f', 'bool'));
    const bytes = Buffer.from([0, 1, 0xfe, 0x5c]);
    const field = copyField(canonicalOf(bytes, 'bytes'), 'bytes');
    // What PostgreSQL writes back for the bytea, once COPY's escaping is undone.
    expect(decodeCopyLine(field)).toEqual(['\\x0001fe5c']);
    expect(canonicalOfCopied('\\x0001fe5c', 'bytes')).toBe(canonicalOf(bytes, 'bytes'));
  });

  it('a line as PostgreSQL writes it has the canonical line of the SQLite row it was copied from', () => {
    const kinds: ColumnKind[] = ['int', 'text', 'float', 'bool', 'bytes', 'text', 'float'];
    const sqliteRow = [42n, 'a\tb\\c\nd', 1e-7, 1n, Buffer.from([0xde, 0xad]), null, 0.5];
    // PostgreSQL's COPY TO of the same row: its own float spelling, t for true, bytea as \\x…
    const pgLine = ['42', 'a\\tb\\\\c\\nd', '1e-07', 't', '\\\\xdead', '\\N', '0.5'].join('\t');
    expect(canonicalLineOfCopied(pgLine, kinds)).toBe(canonicalLineOf(sqliteRow, kinds));
    // A table of integers and text alone is hashed as PostgreSQL wrote it.
    expect(canonicalLineOfCopied('7\tx\\ty', ['int', 'text'])).toBe(canonicalLineOf([7n, 'x\ty'], ['int', 'text']));
    const sum = (line: string) => {
      const c = new RowChecksum();
      c.addLine(line);
      return c.hex();
    };
    expect(sum(canonicalLineOfCopied(pgLine, kinds))).toBe(sum(canonicalLineOf(sqliteRow, kinds)));
  });

  it('a value its column cannot hold is an error naming it, not a silent change', () => {
    const bad: [Parameters<typeof canonicalOf>[0], ColumnKind][] = [
      [1.5, 'int'],
      ['twelve', 'int'],
      ['x', 'float'],
      [2n, 'bool'],
      ['abc', 'bytes'],
      [Buffer.from('a'), 'text'],
    ];
    for (const [v, kind] of bad) expect(() => canonicalOf(v, kind), `${String(v)} as ${kind}`).toThrow(CopyValueError);
  });
});

describe('RowChecksum', () => {
  const rows: (string | null)[][] = [
    ['1', 'a', null],
    ['2', 'b\tc', '1.5'],
    ['3', '', 'x'],
  ];
  const sum = (rs: (string | null)[][]) => {
    const c = new RowChecksum();
    for (const r of rs) c.add(r);
    return c;
  };

  it('is the same for the same rows in the same order, and counts them', () => {
    expect(sum(rows).hex()).toBe(sum(rows.map((r) => [...r])).hex());
    expect(sum(rows).hex()).toMatch(/^[0-9a-f]{64}$/);
    expect(sum(rows).rows).toBe(3);
  });

  it('changes with a changed value, a missing row, a doubled row, rows in another order, or a value moved between fields', () => {
    const base = sum(rows).hex();
    expect(sum([rows[0], rows[1], ['3', '', 'y']]).hex()).not.toBe(base);
    expect(sum([rows[0], rows[1]]).hex()).not.toBe(base);
    expect(sum([...rows, rows[0]]).hex()).not.toBe(base);
    expect(sum([rows[1], rows[0], rows[2]]).hex()).not.toBe(base);
    // Rows are not run together: a field moved across the line break is a different table.
    expect(sum([['1', 'a'], ['b', '2']]).hex()).not.toBe(sum([['1', 'a\nb', '2']]).hex());
    expect(sum([rows[0], ['2', 'b', 'c\t1.5'], rows[2]]).hex()).not.toBe(base);
    // Null is not the empty string, nor the text \N.
    expect(sum([['1', 'a', '']]).hex()).not.toBe(sum([['1', 'a', null]]).hex());
    expect(sum([['1', 'a', '\\N']]).hex()).not.toBe(sum([['1', 'a', null]]).hex());
  });
});
