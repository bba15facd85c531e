import { invalid } from './errors.js';

/**
 * Opaque keyset cursors: the sort key of the last row of a page, base64url-encoded. A keyset
 * cursor stays correct while rows are inserted, unlike an offset.
 */
export type KeyValue = string | number;

export function encodeCursor(key: readonly KeyValue[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string, shape: readonly ('string' | 'number')[]): KeyValue[] {
  const bad = () => invalid('invalid_cursor', 'The cursor is not one this endpoint issued.', 'cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== shape.length) throw bad();
  const out: KeyValue[] = [];
  parsed.forEach((v: unknown, i) => {
    if (shape[i] === 'string' && typeof v === 'string') out.push(v);
    else if (shape[i] === 'number' && typeof v === 'number' && Number.isSafeInteger(v)) out.push(v);
    else throw bad();
  });
  return out;
}
