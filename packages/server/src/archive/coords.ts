export interface Geo {
  lat: number;
  lng: number;
}

// One coordinate: degrees with optional minutes and seconds (DMS) or decimal degrees, then a
// hemisphere letter. Covers `22°54'44"S`, `25°25'15.1"N`, `5.826936°S` and `37.403°N`.
const PART = /(\d+(?:\.\d+)?)\s*°\s*(?:(\d+(?:\.\d+)?)\s*['′’]\s*)?(?:(\d+(?:\.\d+)?)\s*(?:["″”]|''|′′)\s*)?([NSEW])/gi;
const PLAIN = /^\s*(-?\d+(?:\.\d+)?)\s*[,;\s]\s*(-?\d+(?:\.\d+)?)\s*$/;

/**
 * Parses a stadium coordinate text in either notation; S and W are negative. Returns null when
 * the text is empty or not a latitude/longitude pair (a venue without geo is better than a
 * wrong one).
 */
export function parseCoords(text: string | null | undefined): Geo | null {
  if (!text || !text.trim()) return null;
  const plain = PLAIN.exec(text);
  if (plain) return checked(Number(plain[1]), Number(plain[2]));
  let lat: number | null = null;
  let lng: number | null = null;
  for (const m of text.matchAll(PART)) {
    const value = Number(m[1]) + Number(m[2] ?? 0) / 60 + Number(m[3] ?? 0) / 3600;
    const hemi = m[4].toUpperCase();
    const signed = hemi === 'S' || hemi === 'W' ? -value : value;
    if (hemi === 'N' || hemi === 'S') lat = signed;
    else lng = signed;
  }
  return lat === null || lng === null ? null : checked(lat, lng);
}

function checked(lat: number, lng: number): Geo | null {
  if (!Number.isFinite(lat) || !Number.isFinite(lng) || Math.abs(lat) > 90 || Math.abs(lng) > 180) return null;
  return { lat: Math.round(lat * 1e6) / 1e6, lng: Math.round(lng * 1e6) / 1e6 };
}
