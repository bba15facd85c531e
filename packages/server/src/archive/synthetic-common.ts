import type { CompetitionTable, CompetitorTable, VenueTable } from '../store/reference/types.js';
import type { Prng } from './prng.js';
import { slugify } from './slug.js';

/** Every synthetic record says so in the `source` of its plays and seasons. */
export const SYNTHETIC_SOURCE = 'synthetic';
export const SYNTHETIC_SEASON_SOURCE = 'synthetic (seeded generator)';
/** ISO 3166 user-assigned code: synthetic venues are in no real country. */
export const SYNTHETIC_COUNTRY = 'ZZ';

const FIRST = [
  'Adrian', 'Bruno', 'Caleb', 'Dario', 'Elias', 'Felix', 'Gavin', 'Hugo', 'Ivan', 'Jonah', 'Kai', 'Luca', 'Marco', 'Nico',
  'Omar', 'Pablo', 'Quinn', 'Rafael', 'Sami', 'Tomas', 'Umar', 'Victor', 'Wes', 'Xavi', 'Yuri', 'Zane', 'Andre', 'Blake',
  'Cyrus', 'Dmitri', 'Emeka', 'Finn', 'Goran', 'Hiro', 'Idris', 'Joel', 'Kofi', 'Leon', 'Milan', 'Niko', 'Oskar', 'Pavel',
  'Rory', 'Soren', 'Theo', 'Ugo', 'Vidal', 'Wyatt', 'Yann', 'Zeke', 'Aiko', 'Bea', 'Carla', 'Dana', 'Elena', 'Freya',
];
const LAST = [
  'Abara', 'Bellamy', 'Castellan', 'Dorsey', 'Ekwueme', 'Falkner', 'Grimaldi', 'Halvorsen', 'Ibarra', 'Jansen', 'Kovac',
  'Lindqvist', 'Marchetti', 'Novak', 'Okafor', 'Petrov', 'Quintero', 'Rasmussen', 'Sandoval', 'Takeda', 'Ulloa',
  'Varga', 'Whitlock', 'Xiong', 'Yamada', 'Zeller', 'Arslan', 'Brennan', 'Cervantes', 'Dufresne', 'Esposito', 'Fontaine',
  'Galloway', 'Horvat', 'Iwasaki', 'Jovanovic', 'Kaplan', 'Lombardi', 'Mendoza', 'Nakamura', 'Oduya', 'Pellegrini',
  'Ramires', 'Sorensen', 'Tanaka', 'Uribe', 'Vasquez', 'Wojcik', 'Yilmaz', 'Zamora',
];

/** `count` distinct invented names; `taken` (slugs) is shared so a league never repeats a name. */
export function inventNames(prng: Prng, count: number, taken: Set<string>): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const name = `${prng.pick(FIRST)} ${prng.pick(LAST)}`;
    const slug = slugify(name);
    if (taken.has(slug)) continue;
    taken.add(slug);
    out.push(name);
  }
  return out;
}

export function syntheticVenue(prng: Prng, name: string, city: string, capacity: number): VenueTable {
  // Invented coordinates in open ocean-free mid latitudes; clearly marked synthetic.
  const lat = Math.round((30 + prng.next() * 20) * 1e4) / 1e4;
  const lng = Math.round((-120 + prng.next() * 40) * 1e4) / 1e4;
  return { id: slugify(name), name, city, country: SYNTHETIC_COUNTRY, lat, lng, capacity, synthetic: 1 };
}

export { addDays } from '../domain/clock.js';
export const at = (date: string, hhmm: string): string => `${date}T${hhmm}:00.000Z`;
export const hhmm = (minutesOfDay: number): string =>
  `${String(Math.floor(minutesOfDay / 60) % 24).padStart(2, '0')}:${String(minutesOfDay % 60).padStart(2, '0')}`;

export interface SyntheticComp {
  sport: string;
  league: string;
  n: number;
  date: string;
  startTime: string;
  venueId: string | null;
  name: string;
  final: boolean;
  sourceKey: string;
}

export function syntheticCompetition(s: SyntheticComp): CompetitionTable {
  return {
    id: `${s.sport}_${s.league}_${s.n}`,
    sport: s.sport,
    league: s.league,
    season_id: `${s.league}_${s.date.slice(0, 4)}`,
    n: s.n,
    date: s.date,
    start_time: s.startTime,
    status: s.final ? 'final' : 'scheduled',
    venue_id: s.venueId,
    name: s.name,
    synthetic: 1,
    source_key: s.sourceKey,
  };
}

export function competitorRows(
  competitionId: string,
  entityType: 'team' | 'player',
  entries: { id: string; role: string; score: number }[],
): CompetitorTable[] {
  return entries.map((e, idx) => ({ competition_id: competitionId, idx, entity_type: entityType, entity_id: e.id, role: e.role, score: e.score }));
}

/** "MM:SS" of a countdown clock. */
export function countdown(remainingSeconds: number): string {
  const s = Math.max(0, Math.round(remainingSeconds));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}
