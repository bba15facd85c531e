/** Where a transfer command writes its lines for people (stderr for progress, stdout for results). */
export type Out = { write(s: string): unknown; isTTY?: boolean };

/** Rows under a header, each column as wide as its widest cell; `right[i]` aligns column i right (numbers). */
export function alignedTable(header: readonly string[], rows: readonly (readonly string[])[], right: readonly boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i]) : i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * An operation a transfer command will not do (a running node, a newer schema, a target that
 * holds data, a wrong key), said in one line; nothing was written. The command prints it after
 * its name and exits 1.
 */
export class Refused extends Error {}
