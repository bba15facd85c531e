/**
 * The raw text of each item of a list response's `data` array, exactly as the server sent it.
 * Byte-for-byte comparisons need the bytes, not a re-serialisation of the parsed JSON (which
 * would hide differences in key order or number format).
 */
export function rawDataItems(body: string): string[] {
  const start = body.indexOf('"data":[');
  if (start < 0) throw new Error(`no data array in ${body.slice(0, 200)}`);
  const items: string[] = [];
  let depth = 0;
  let inString = false;
  let itemStart = start + '"data":['.length;
  for (let i = itemStart; i < body.length; i++) {
    const ch = body[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      if (depth === 0) {
        // The closing bracket of `data` itself.
        if (i > itemStart) items.push(body.slice(itemStart, i));
        return items;
      }
      depth--;
    } else if (ch === ',' && depth === 0) {
      items.push(body.slice(itemStart, i));
      itemStart = i + 1;
    }
  }
  throw new Error('unterminated data array');
}
