/**
 * Whether an Accept-Encoding header asks for gzip: `gzip` / `x-gzip` (or `*`) with a q-value
 * above zero. `gzip;q=0` is an explicit refusal.
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  let star = false;
  for (const part of value.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((x) => x.trim()).find((x) => x.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    const accepted = Number.isFinite(q) && q > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') star = accepted;
  }
  return star;
}
