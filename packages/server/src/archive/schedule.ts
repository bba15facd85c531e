import { inScheduleTransaction, type BulkLoad } from '../store/reference/archive-load.js';
import type { Db } from '../store/sql/db.js';
import type { SeasonSpan } from '../store/reference/reference.js';
import type { SeasonTable } from '../store/reference/types.js';
import { hashSeed, Prng } from './prng.js';
import { emptyRows, type Rows } from './rows.js';
import { addDays, at, competitorRows, hhmm, syntheticCompetition } from './synthetic-common.js';

interface Pools {
  soccer: string[];
  basketball: { id: string; venue: string | null }[];
  tennis: string[];
  golf: string[];
  mma: { id: string; weightClass: string }[];
  venues: Map<string, string[]>;
}

interface SportPlan {
  sport: string;
  league: string;
  perDay: number;
  /** First start of the day in minutes after 00:00 UTC; the rest are spread evenly over 24 h. */
  phase: number;
  name: (year: string) => string;
  /** The competitors of the next game of the day, or null when the pool is too small. */
  pick: (prng: Prng, pools: Pools, used: Set<string>) => { type: 'team' | 'player'; ids: string[]; roles: string[]; venue: string | null } | null;
}

function fresh<T extends string>(prng: Prng, pool: readonly T[], count: number, used: Set<string>): T[] | null {
  const free = prng.shuffle(pool.filter((id) => !used.has(id))).slice(0, count);
  if (free.length < count) return null;
  for (const id of free) used.add(id);
  return free;
}

const leagueVenue = (prng: Prng, pools: Pools, league: string): string | null => {
  const list = pools.venues.get(league) ?? [];
  return list.length ? prng.pick(list) : null;
};

const PLANS: SportPlan[] = [
  {
    sport: 'soccer', league: 'intl', perDay: 4, phase: 60,
    name: () => 'Simulated replay · synthetic',
    pick: (prng, pools, used) => {
      const ids = fresh(prng, pools.soccer, 2, used);
      return ids && { type: 'team', ids, roles: ['home', 'away'], venue: null };
    },
  },
  {
    sport: 'basketball', league: 'sbl', perDay: 4, phase: 180,
    name: (y) => `Synthetic Basketball League ${y}`,
    pick: (prng, pools, used) => {
      const ids = fresh(prng, pools.basketball.map((t) => t.id), 2, used);
      return ids && { type: 'team', ids, roles: ['home', 'away'], venue: pools.basketball.find((t) => t.id === ids[0])?.venue ?? null };
    },
  },
  {
    sport: 'tennis', league: 'stt', perDay: 2, phase: 300,
    name: (y) => `Synthetic Tennis Tour ${y} · Exhibition`,
    pick: (prng, pools, used) => {
      const ids = fresh(prng, pools.tennis, 2, used);
      return ids && { type: 'player', ids, roles: ['home', 'away'], venue: leagueVenue(prng, pools, 'stt') };
    },
  },
  {
    sport: 'golf', league: 'sgt', perDay: 1, phase: 540,
    name: (y) => `Synthetic Golf Tour ${y} · Daily round`,
    pick: (prng, pools, used) => {
      const ids = fresh(prng, pools.golf, 6, used);
      return ids && { type: 'player', ids, roles: ids.map((_, i) => `p${i + 1}`), venue: leagueVenue(prng, pools, 'sgt') };
    },
  },
  {
    sport: 'mma', league: 'smma', perDay: 2, phase: 660,
    name: (y) => `Synthetic MMA ${y} · Fight night`,
    pick: (prng, pools, used) => {
      // Bouts are between fighters of one weight class; each bout of the day uses another class.
      const classes = [...new Set(pools.mma.map((f) => f.weightClass))].sort().filter((c) => !used.has(`class:${c}`));
      if (classes.length === 0) return null;
      const wc = prng.pick(classes);
      used.add(`class:${wc}`);
      const ids = fresh(prng, pools.mma.filter((f) => f.weightClass === wc).map((f) => f.id), 2, used);
      return ids && { type: 'player', ids, roles: ['red', 'blue'], venue: leagueVenue(prng, pools, 'smma') };
    },
  },
];

async function loadPools(load: BulkLoad): Promise<Pools> {
  const wcCodes = new Set((await load.teamsOfLeague('wc')).map((r) => r.code));
  const intl = await load.teamsOfLeague('intl');
  const sbl = await load.teamsOfLeague('sbl');
  const players = await load.playersOfLeagues(['stt', 'sgt', 'smma']);
  const venueRows = await load.venuesOfLeagues(['stt', 'sgt', 'smma']);
  const venues = new Map<string, string[]>();
  for (const v of venueRows) if (v.venue_id) venues.set(v.league, [...(venues.get(v.league) ?? []), v.venue_id]);
  return {
    // Replays are between World Cup nations, in their international-match identity.
    soccer: intl.filter((t) => wcCodes.has(t.code)).map((t) => t.id),
    basketball: sbl.map((t) => ({ id: t.id, venue: t.venue_id })),
    tennis: players.filter((p) => p.league === 'stt').map((p) => p.id),
    golf: players.filter((p) => p.league === 'sgt').map((p) => p.id),
    mma: players.filter((p) => p.league === 'smma').map((p) => ({ id: p.id, weightClass: p.position ?? '' })),
    venues,
  };
}

/** Creates missing seasons and widens existing ones to cover the new dates. */
async function coverSeasons(load: BulkLoad, rows: Rows): Promise<void> {
  const span = new Map<string, SeasonSpan>();
  for (const c of rows.competitions) {
    const s = span.get(c.season_id) ?? { league: c.league, start: c.date, end: c.date };
    span.set(c.season_id, { league: s.league, start: c.date < s.start ? c.date : s.start, end: c.date > s.end ? c.date : s.end });
  }
  const missing = await load.coverSeasons(span, (id, s, sport): SeasonTable => ({
    id, league: s.league, sport, label: id.slice(id.lastIndexOf('_') + 1),
    start_date: s.start, end_date: s.end, synthetic: 1, source: 'synthetic (scheduled games)',
  }));
  for (const season of missing) rows.seasons.push(season);
}

/**
 * Scheduled competitions for today..today+days (inclusive) in every sport, for the live
 * simulator and the demo. A date that already has a competition of a sport is left alone, so
 * this is idempotent and cheap to call on every start. Pairings are seeded by sport and date.
 */
export async function ensureSchedule(db: Db, opts: { today: string; days?: number }): Promise<number> {
  const days = opts.days ?? 7;
  const dates = Array.from({ length: days + 1 }, (_, i) => addDays(opts.today, i));
  return inScheduleTransaction(db, async (load) => {
    const pools = await loadPools(load);
    const rows = emptyRows();
    for (const plan of PLANS) {
      const have = await load.datesWithGames(plan.sport, dates[0], dates[dates.length - 1]);
      let n = await load.lastGameNumber(plan.sport);
      for (const date of dates) {
        if (have.has(date)) continue;
        const prng = new Prng(hashSeed(`${plan.sport}:${date}`));
        const used = new Set<string>();
        for (let k = 0; k < plan.perDay; k++) {
          const pick = plan.pick(prng, pools, used);
          if (!pick) break;
          const c = syntheticCompetition({
            sport: plan.sport,
            league: plan.league,
            n: ++n,
            date,
            startTime: at(date, hhmm(Math.round((plan.phase + (k * 1440) / plan.perDay) / 5) * 5)),
            venueId: pick.venue,
            name: plan.name(date.slice(0, 4)),
            final: false,
            sourceKey: `sched:${plan.sport}:${date}:${k + 1}`,
          });
          rows.competitions.push(c);
          rows.competitors.push(...competitorRows(c.id, pick.type, pick.ids.map((id, i) => ({ id, role: pick.roles[i], score: 0 }))));
        }
      }
    }
    await coverSeasons(load, rows);
    await load.write(rows);
    return rows.competitions.length;
  });
}
