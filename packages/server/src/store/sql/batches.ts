// SQLite allows 32766 bound variables per statement and PostgreSQL 65535; stay well below both.
const MAX_VARS = 30_000;
const MAX_ROWS = 500;

/**
 * Rows cut into multi-row inserts both engines accept, for the owners' bulk inserts (a bulk load,
 * store/reference/archive-load.ts). The width is read from the first row: every row of a batch has the same
 * columns.
 */
export function chunks<T extends object>(rows: readonly T[]): T[][] {
  if (rows.length === 0) return [];
  const cols = Object.keys(rows[0]).length;
  const size = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_VARS / cols)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
