import type { VenueTable } from '../store/reference/types.js';
import { parseCoords } from './coords.js';
import { normWords, slugify } from './slug.js';
import type { OfStadium } from './sources.js';

/** Host country (ISO 3166-1 alpha-2) of World Cups whose stadium files have no `cc` field. */
const HOST_COUNTRY: Readonly<Record<number, string>> = { 2014: 'BR', 2018: 'RU', 2022: 'QA' };

export interface WcVenue {
  id: string;
  /** Minutes east of UTC from the stadium's `timezone` ("UTC-3" → -180), null if unknown. */
  utcOffset: number | null;
  names: string[];
  cities: string[];
}

// Words every other stadium has: they must not decide which stadium a `ground` names.
const GENERIC = new Set(['stadium', 'stadion', 'estadio', 'arena', 'de', 'do', 'da', 'das', 'dos', 'the', 'iconic', 'international', 'field', 'park']);

/** "UTC-3" → -180, "UTC+5:30" → 330; null when absent or malformed. */
export function parseUtcOffset(text: string | null | undefined): number | null {
  const m = /UTC\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?/i.exec(text ?? '');
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  return m[1] === '-' ? -minutes : minutes;
}

/** Local date + "HH:MM[ UTC±h]" → ISO UTC; the time's own offset wins over the stadium's. */
export function kickoffUtc(date: string, time: string | undefined, stadiumOffset: number | null): string | null {
  const m = /^(\d{1,2}):(\d{2})/.exec(time ?? '');
  if (!m) return null;
  const offset = parseUtcOffset(time) ?? stadiumOffset;
  if (offset === null) return null;
  const local = Date.parse(`${date}T${m[1].padStart(2, '0')}:${m[2]}:00.000Z`);
  return new Date(local - offset * 60_000).toISOString();
}

const cityName = (city: string): string => city.replace(/\s*\(\d+\)\s*$/, '');
const expand = (s: string): string => normWords(s).replace(/\bst\b/g, 'saint');

export function wcVenues(year: number, stadiums: OfStadium[], taken: Set<string>): { rows: VenueTable[]; venues: WcVenue[] } {
  const rows: VenueTable[] = [];
  const venues: WcVenue[] = [];
  for (const s of stadiums) {
    let id = slugify(s.name);
    if (taken.has(id)) id = `${id}-${year}`;
    taken.add(id);
    const geo = parseCoords(s.coords);
    const country = (s.cc ?? HOST_COUNTRY[year] ?? '').toUpperCase();
    const city = cityName(s.city);
    rows.push({ id, name: s.name, city, country, lat: geo?.lat ?? null, lng: geo?.lng ?? null, capacity: s.capacity ?? null, synthetic: 0 });
    // "Otkritie Arena (Spartak Stadium)" is known by either name; "Los Angeles (Inglewood)" by both places.
    const paren = /^(.*?)\s*\((.*)\)\s*$/;
    const nm = paren.exec(s.name);
    const cm = paren.exec(city);
    venues.push({
      id,
      utcOffset: parseUtcOffset(s.timezone),
      names: [s.name, ...(nm ? [nm[1], nm[2]] : [])].map(expand),
      cities: [s.city, city, ...(cm ? [cm[1], cm[2]] : [])].map(expand),
    });
  }
  return { rows, venues };
}

const distinctive = (s: string): string[] => s.split(' ').filter((w) => w && !GENERIC.has(w));

/**
 * Finds the stadium a match's `ground` names ("Al Bayt Stadium, Al Khor", or just a city in
 * 2026). Exact name first, then shared distinctive words ("Lusail Iconic Stadium" ~ "Lusail
 * Stadium"), then the city ("Arena de São Paulo, São Paulo" → the one São Paulo stadium).
 */
export function matchGround(venues: WcVenue[], ground: string | undefined): WcVenue | null {
  if (!ground) return null;
  const comma = ground.lastIndexOf(',');
  const name = comma >= 0 ? expand(ground.slice(0, comma)) : '';
  const city = expand(comma >= 0 ? ground.slice(comma + 1) : ground);
  if (name) {
    const exact = venues.find((v) => v.names.includes(name));
    if (exact) return exact;
    const words = distinctive(name);
    const scored = venues
      .map((v) => ({ v, n: Math.max(...v.names.map((vn) => distinctive(vn).filter((w) => words.includes(w)).length)) }))
      .filter((x) => x.n > 0)
      .sort((a, b) => b.n - a.n);
    if (scored.length > 0 && (scored.length === 1 || scored[0].n > scored[1].n)) return scored[0].v;
  }
  const inCity = venues.filter((v) => v.cities.includes(city));
  return inCity[0] ?? (name ? null : (venues.find((v) => v.cities.some((c) => c.includes(city) || city.includes(c))) ?? null));
}
