/**
 * A small RFC 4180 CSV reader: quoted fields may hold commas, quotes ("") and newlines.
 * The sources are a few MB, so reading whole files into memory is fine and keeps this simple.
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = parseRows(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const header = rows.shift();
  if (!header) return [];
  return rows
    .filter((r) => !(r.length === 1 && r[0] === ''))
    .map((r) => {
      const rec: Record<string, string> = {};
      header.forEach((h, i) => {
        rec[h] = r[i] ?? '';
      });
      return rec;
    });
}

function parseRows(text: string): string[][] {
  // Slices instead of per-character concatenation: results.csv and goalscorers.csv are ~100k lines.
  const rows: string[][] = [];
  const n = text.length;
  let row: string[] = [];
  let i = 0;
  while (i < n) {
    let field: string;
    if (text[i] === '"') {
      field = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) {
          field += text.slice(i);
          i = n;
          break;
        }
        field += text.slice(i, q);
        i = q + 1;
        if (text[i] !== '"') break;
        field += '"';
        i++;
      }
      // Tolerate stray characters between a closing quote and the delimiter.
      while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') field += text[i++];
    } else {
      let j = i;
      while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
      field = text.slice(i, j);
      i = j;
    }
    row.push(field);
    if (i >= n) break;
    if (text[i] === ',') {
      i++;
      if (i >= n) row.push('');
      continue;
    }
    i += text[i] === '\r' && text[i + 1] === '\n' ? 2 : 1;
    rows.push(row);
    row = [];
  }
  if (row.length > 0) rows.push(row);
  return rows;
}
