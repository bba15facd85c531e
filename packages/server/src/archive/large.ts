import { analyzeAfterBulkLoad, inBulkTransaction } from '../store/reference/archive-load.js';
import { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import { MetaRepo } from '../store/sql/meta.js';
import { ReferenceRepo } from '../store/reference/reference.js';
import { largeGame, type LargeTeam } from './large-game.js';
import { sortEvents } from './plays.js';
import { hashSeed, Prng } from './prng.js';
import { emptyRows } from './rows.js';
import { addDays, at, syntheticCompetition, syntheticVenue } from './synthetic-common.js';
import { externalIds } from './teams.js';

/**
 * A large synthetic basketball league for benchmarks: `events` confirmed events (and as many
 * scoring plays) spread evenly over `seasons` calendar-year seasons, reproducible from `seed`.
 * Everything it writes is flagged synthetic, like the other generated leagues.
 */
export interface LargeOptions {
  league: string;
  events: number;
  seasons: number;
  firstSeason: number;
  seed: number;
  /** Dates on or after today would not be final; the generator refuses to write them. */
  today: string;
  log?: (line: string) => void;
}

export interface LargeSummary {
  league: string;
  seasons: number;
  competitions: number;
  plays: number;
  events: number;
  ms: number;
  skipped: boolean;
}

const MIN_TEAMS = 30;
/** Scoring plays per game are drawn from 70..110, so a game averages about 90 events. */
const EVENTS_PER_GAME = 90;
/** Game days available in a calendar-year season, leaving a margin for the year's end. */
const GAME_DAYS = 350;
const TIP_OFFS = ['17:00', '19:30', '22:00'];
// Buffered rows are written once a batch holds this many events: bounded memory at any size.
const FLUSH_EVENTS = 20_000;
const CITIES = ['Ashford', 'Brightwater', 'Coldspring', 'Dunmore', 'Elmstead', 'Fairhaven', 'Glenrock', 'Highmoor', 'Ironwood', 'Juniper Bay'];
const NICKS = ['Foxes', 'Gulls', 'Owls'];

export class LargeUsageError extends Error {}

type Team = LargeTeam & { name: string; city: string; venueId: string };

/** Enough teams that every team plays once a game day and the biggest season fits in its year. */
export function teamCount(maxSeasonEvents: number): number {
  const perDay = Math.ceil(maxSeasonEvents / EVENTS_PER_GAME / GAME_DAYS);
  return Math.max(MIN_TEAMS, 2 * perDay);
}

function teams(league: string, count: number): Omit<Team, 'venueId'>[] {
  return Array.from({ length: count }, (_, i) => {
    const code = `T${String(i + 1).padStart(3, '0')}`;
    const city = CITIES[i % CITIES.length];
    const round = Math.floor(i / (CITIES.length * NICKS.length));
    const name = `${city} ${NICKS[Math.floor(i / CITIES.length) % NICKS.length]}${round > 0 ? ` ${round + 1}` : ''}`;
    return { id: `team:${league}:${code}`, code, city, name };
  });
}

/** Events of each season: an even split, the first seasons taking the remainder. */
export function seasonBudgets(events: number, seasons: number): number[] {
  return Array.from({ length: seasons }, (_, i) => Math.floor(events / seasons) + (i < events % seasons ? 1 : 0));
}

/** The `meta` key a generated league's options are recorded under. */
const metaKey = (league: string): string => `large:${league}`;

/**
 * Writes the league once per database: a second call with the same options is a no-op, with
 * other options an error (the league would mix two generations).
 */
export async function generateLarge(db: Db, o: LargeOptions): Promise<LargeSummary> {
  const started = Date.now();
  const log = o.log ?? (() => {});
  if (!/^[a-z0-9]{1,16}$/.test(o.league)) throw new LargeUsageError(`league must be 1..16 lowercase letters or digits, got '${o.league}'`);
  if (!Number.isInteger(o.events) || o.events < 1) throw new LargeUsageError('events must be a positive integer');
  if (!Number.isInteger(o.seasons) || o.seasons < 1) throw new LargeUsageError('seasons must be a positive integer');
  const signature = JSON.stringify({ events: o.events, seasons: o.seasons, firstSeason: o.firstSeason, seed: o.seed });
  const summary: LargeSummary = { league: o.league, seasons: o.seasons, competitions: 0, plays: 0, events: 0, ms: 0, skipped: false };
  const meta = new MetaRepo(db);
  const present = await meta.get(metaKey(o.league));
  if (present === signature) return { ...summary, skipped: true, ms: Date.now() - started };
  if (present !== undefined) throw new LargeUsageError(`league ${o.league} was generated with ${present}; use a fresh database`);
  if ((await new ReferenceRepo(db).leagueSport(o.league)) !== undefined) {
    throw new LargeUsageError(`league ${o.league} already exists in this database`);
  }

  const budgets = seasonBudgets(o.events, o.seasons);
  const prng = new Prng(o.seed);
  const league: Team[] = [];
  await inBulkTransaction(db, async (load) => {
    const rows = emptyRows();
    rows.leagues.push({ id: o.league, sport: 'basketball', name: `Synthetic Benchmark League (${o.league})`, synthetic: 1 });
    for (const t of teams(o.league, teamCount(Math.max(...budgets)))) {
      const venue = syntheticVenue(prng, `${t.name} Arena ${o.league}`, t.city, prng.int(12, 20) * 1000);
      rows.venues.push(venue);
      rows.teams.push({ id: t.id, sport: 'basketball', league: o.league, name: t.name, code: t.code, venue_id: venue.id, external_ids: externalIds({}), synthetic: 1 });
      league.push({ ...t, venueId: venue.id });
    }
    await load.write(rows);
  });

  let n = (await new CompetitionRepo(db).lastGameNumber('basketball')) + 1;
  for (let s = 0; s < o.seasons; s++) {
    const year = o.firstSeason + s;
    const written = await writeSeason(db, o, year, budgets[s], n, league);
    n += written.competitions;
    summary.competitions += written.competitions;
    summary.plays += written.plays;
    summary.events += written.events;
    log(`large: ${o.league}_${year}: ${written.competitions} games, ${written.events} events`);
  }
  await meta.insert(metaKey(o.league), signature);
  await analyzeAfterBulkLoad(db);
  summary.ms = Date.now() - started;
  return summary;
}

/** One season in one transaction, flushed in batches so memory stays flat whatever its size. */
async function writeSeason(db: Db, o: LargeOptions, year: number, budget: number, firstN: number, league: Team[]) {
  const prng = new Prng(hashSeed(`${o.seed}:${o.league}:${year}`));
  const counts = { competitions: 0, plays: 0, events: 0 };
  const first = `${year}-01-02`;
  await inBulkTransaction(db, async (load) => {
    let rows = emptyRows();
    const flush = async () => {
      rows.events = sortEvents(rows.events);
      counts.plays += rows.plays.length;
      await load.write(rows);
      rows = emptyRows();
    };
    let left = budget;
    let end = first;
    for (let day = 0; left > 0; day++) {
      const date = addDays(first, day);
      if (date >= o.today || date.slice(0, 4) !== String(year)) {
        throw new LargeUsageError(`season ${year} would run into ${date}; seasons must end before today (${o.today}) and within their year`);
      }
      end = date;
      const order = prng.shuffle(league);
      for (let g = 0; g < order.length / 2 && left > 0; g++) {
        const scoring = Math.min(left, prng.int(70, 110));
        left -= scoring;
        const home = order[2 * g];
        const c = syntheticCompetition({
          sport: 'basketball',
          league: o.league,
          n: firstN + counts.competitions,
          date,
          startTime: at(date, TIP_OFFS[g % TIP_OFFS.length]),
          venueId: home.venueId,
          name: `Synthetic Benchmark League ${year}`,
          final: true,
          sourceKey: `large:${o.league}:${o.seed}:${firstN + counts.competitions}`,
        });
        rows.competitions.push(c);
        largeGame(prng, c, home, order[2 * g + 1], scoring, rows);
        counts.competitions++;
        counts.events += scoring;
      }
      // Flush at day boundaries only, so each batch's events can be put in time order.
      if (rows.events.length >= FLUSH_EVENTS) await flush();
    }
    await flush();
    // The season's row last, once its games say where it ends.
    rows.seasons.push({ id: `${o.league}_${year}`, league: o.league, sport: 'basketball', label: String(year), start_date: first, end_date: end, synthetic: 1, source: `synthetic (large benchmark generator, seed ${o.seed})` });
    await load.write(rows);
  });
  return counts;
}
