import { competitorRows, syntheticCompetition } from '../archive/synthetic-common.js';
import { isoTime } from '../domain/clock.js';
import { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import { MetaRepo } from '../store/sql/meta.js';
import { ReferenceRepo } from '../store/reference/reference.js';
import { pickIndex, type Random } from './random.js';
import type { SimSport } from './timeline.js';

const CLAIM = 'sim_claim:';

/** Today's scheduled games of a sport that no simulator has claimed, earliest start first. */
export async function scheduledToday(db: Db, sport: SimSport, today: string): Promise<string[]> {
  const ids = await new CompetitionRepo(db).scheduledOn(sport, today);
  const claimed = new Set((await new MetaRepo(db).getMany(ids.map((id) => CLAIM + id))).map((r) => r.key.slice(CLAIM.length)));
  return ids.filter((id) => !claimed.has(id));
}

/**
 * Takes a game for this simulator. Several simulators may share a database (cluster nodes, or
 * `svc simulate` beside `svc serve`); the meta row's primary key lets exactly one of them win.
 */
export async function claim(db: Db, competitionId: string, nowMs: number): Promise<boolean> {
  return new MetaRepo(db).claim(CLAIM + competitionId, isoTime(nowMs));
}

/** A finished (or abandoned) game no longer needs its claim: it is not `scheduled` any more. */
export async function release(db: Db, competitionId: string): Promise<void> {
  await new MetaRepo(db).release(CLAIM + competitionId);
}

const LEAGUE: Record<SimSport, string> = { soccer: 'intl', basketball: 'sbl' };
const NAME: Record<SimSport, (year: string) => string> = {
  // The same names the archive's schedule gives its games.
  soccer: () => 'Simulated replay · synthetic',
  basketball: (y) => `Synthetic Basketball League ${y}`,
};

async function teamPool(db: Db, sport: SimSport): Promise<{ id: string; venue: string | null }[]> {
  const reference = new ReferenceRepo(db);
  if (sport === 'basketball') return (await reference.teamsOfLeague('sbl')).map((t) => ({ id: t.id, venue: t.venue_id }));
  // As the archive's schedule does: World Cup nations, in their international-match identity.
  const wc = new Set((await reference.teamsOfLeague('wc')).map((t) => t.code));
  const intl = await reference.teamsOfLeague('intl');
  return intl.filter((t) => wc.has(t.code)).map((t) => ({ id: t.id, venue: null }));
}

/**
 * A fresh synthetic scheduled game for today, between two teams not already playing today
 * where possible, so a newcomer sees a live game even when today's schedule is used up.
 * Returns its competition id, or undefined when the league has fewer than two teams.
 */
export async function createTodayGame(db: Db, sport: SimSport, today: string, nowMs: number, random: Random): Promise<string | undefined> {
  const competitions = new CompetitionRepo(db);
  const pool = await teamPool(db, sport);
  const busy = new Set(await competitions.competingOn(sport, today));
  const free = pool.filter((t) => !busy.has(t.id));
  const from = free.length >= 2 ? free : pool;
  if (from.length < 2) return undefined;
  const home = from.splice(pickIndex(random, from.length), 1)[0];
  const away = from[pickIndex(random, from.length)];
  const league = LEAGUE[sport];
  const year = today.slice(0, 4);

  return competitions.scheduleGame(sport, (n) => {
    const c = syntheticCompetition({
      sport,
      league,
      n,
      date: today,
      startTime: `${isoTime(nowMs).slice(0, 16)}:00.000Z`,
      venueId: home.venue,
      name: NAME[sport](year),
      final: false,
      sourceKey: `sim:${sport}:${today}:${n}`,
    });
    return {
      competition: c,
      competitors: competitorRows(c.id, 'team', [
        { id: home.id, role: 'home', score: 0 },
        { id: away.id, role: 'away', score: 0 },
      ]),
      season: { id: c.season_id, league, sport, label: year, start_date: today, end_date: today, synthetic: 1, source: 'synthetic (scheduled games)' },
    };
  });
}

/** A claim older than this belongs to a simulator that died: no replay runs that long (1× ≈ 1 h 45). */
const CLAIM_STALE_MS = 3 * 3600_000;

/**
 * Live games whose replay stopped half-way (the process was stopped or died): they would stay
 * `live` forever and keep taking reports. Recognised by the simulator's plays (`source` sim:…)
 * and no live claim. Returns each with the home competitor, to attribute its `final` play to.
 */
export async function abandonedReplays(db: Db, nowMs: number): Promise<{ competitionId: string; home: string }[]> {
  const games = await new CompetitionRepo(db).liveWithPlaysFrom(['soccer', 'basketball'], 'sim:');
  const claims = await new MetaRepo(db).getMany(games.map((g) => CLAIM + g.competitionId));
  const fresh = new Set(claims.filter((c) => nowMs - Date.parse(c.value) < CLAIM_STALE_MS).map((c) => c.key.slice(CLAIM.length)));
  return games.filter((g) => !fresh.has(g.competitionId));
}
