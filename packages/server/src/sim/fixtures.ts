import { sql } from 'kysely';
import { SCHEDULE_LOCK } from '../archive/schedule.js';
import { competitorRows, syntheticCompetition } from '../archive/synthetic-common.js';
import { isoTime } from '../domain/clock.js';
import type { Db } from '../store/db.js';
import { pickIndex, type Random } from './random.js';
import type { SimSport } from './timeline.js';

const CLAIM = 'sim_claim:';

/** Today's scheduled games of a sport that no simulator has claimed, earliest start first. */
export async function scheduledToday(db: Db, sport: SimSport, today: string): Promise<string[]> {
  const rows = await db.kysely
    .selectFrom('competitions')
    .select(['id', 'n', 'start_time'])
    .where('sport', '=', sport)
    .where('date', '=', today)
    .where('status', '=', 'scheduled')
    .execute();
  if (rows.length === 0) return [];
  const claimed = new Set(
    (await db.kysely.selectFrom('meta').select('key').where('key', 'in', rows.map((r) => CLAIM + r.id)).execute()).map((r) => r.key.slice(CLAIM.length)),
  );
  // Sorted here, not in SQL: the engines disagree on where NULL start times go.
  return rows
    .filter((r) => !claimed.has(r.id))
    .sort((a, b) => (a.start_time ?? '~').localeCompare(b.start_time ?? '~') || a.n - b.n)
    .map((r) => r.id);
}

/**
 * Takes a game for this simulator. Several simulators may share a database (cluster nodes, or
 * `svc simulate` beside `svc serve`); the meta row's primary key lets exactly one of them win.
 */
export async function claim(db: Db, competitionId: string, nowMs: number): Promise<boolean> {
  const won = await db.kysely
    .insertInto('meta')
    .values({ key: CLAIM + competitionId, value: isoTime(nowMs) })
    .onConflict((oc) => oc.column('key').doNothing())
    .returning('key')
    .executeTakeFirst();
  return won !== undefined;
}

/** A finished (or abandoned) game no longer needs its claim: it is not `scheduled` any more. */
export async function release(db: Db, competitionId: string): Promise<void> {
  await db.kysely.deleteFrom('meta').where('key', '=', CLAIM + competitionId).execute();
}

const LEAGUE: Record<SimSport, string> = { soccer: 'intl', basketball: 'sbl' };
const NAME: Record<SimSport, (year: string) => string> = {
  // The same names the archive's schedule gives its games.
  soccer: () => 'Simulated replay · synthetic',
  basketball: (y) => `Synthetic Basketball League ${y}`,
};

async function teamPool(db: Db, sport: SimSport): Promise<{ id: string; venue: string | null }[]> {
  if (sport === 'basketball') {
    const rows = await db.kysely.selectFrom('teams').select(['id', 'venue_id']).where('league', '=', 'sbl').orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, venue: r.venue_id }));
  }
  // As the archive's schedule does: World Cup nations, in their international-match identity.
  const wc = new Set((await db.kysely.selectFrom('teams').select('code').where('league', '=', 'wc').execute()).map((r) => r.code));
  const intl = await db.kysely.selectFrom('teams').select(['id', 'code']).where('league', '=', 'intl').orderBy('id').execute();
  return intl.filter((t) => wc.has(t.code)).map((t) => ({ id: t.id, venue: null }));
}

/**
 * A fresh synthetic scheduled game for today, between two teams not already playing today
 * where possible, so a newcomer sees a live game even when today's schedule is used up.
 * Returns its competition id, or undefined when the league has fewer than two teams.
 */
export async function createTodayGame(db: Db, sport: SimSport, today: string, nowMs: number, random: Random): Promise<string | undefined> {
  const pool = await teamPool(db, sport);
  const busy = new Set(
    (
      await db.kysely
        .selectFrom('competitors as p')
        .innerJoin('competitions as c', 'c.id', 'p.competition_id')
        .select('p.entity_id')
        .where('c.sport', '=', sport)
        .where('c.date', '=', today)
        .execute()
    ).map((r) => r.entity_id),
  );
  const free = pool.filter((t) => !busy.has(t.id));
  const from = free.length >= 2 ? free : pool;
  if (from.length < 2) return undefined;
  const home = from.splice(pickIndex(random, from.length), 1)[0];
  const away = from[pickIndex(random, from.length)];
  const league = LEAGUE[sport];
  const year = today.slice(0, 4);

  return db.kysely.transaction().execute(async (trx) => {
    // The archive's schedule numbers games under this lock too: both take max(n) + 1.
    if (db.engine === 'postgres') await sql`select pg_advisory_xact_lock(${SCHEDULE_LOCK})`.execute(trx);
    const max = await trx.selectFrom('competitions').select((eb) => eb.fn.max('n').as('n')).where('sport', '=', sport).executeTakeFirst();
    const n = Number(max?.n ?? 0) + 1;
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
    await trx.insertInto('competitions').values(c).execute();
    await trx
      .insertInto('competitors')
      .values(
        competitorRows(c.id, 'team', [
          { id: home.id, role: 'home', score: 0 },
          { id: away.id, role: 'away', score: 0 },
        ]),
      )
      .execute();
    const season = await trx.selectFrom('seasons').selectAll().where('id', '=', c.season_id).executeTakeFirst();
    if (!season) {
      await trx
        .insertInto('seasons')
        .values({ id: c.season_id, league, sport, label: year, start_date: today, end_date: today, synthetic: 1, source: 'synthetic (scheduled games)' })
        .execute();
    } else if (season.end_date < today || season.start_date > today) {
      await trx
        .updateTable('seasons')
        .set({ start_date: season.start_date > today ? today : season.start_date, end_date: season.end_date < today ? today : season.end_date })
        .where('id', '=', c.season_id)
        .execute();
    }
    return c.id;
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
  const rows = await db.kysely
    .selectFrom('competitions as c')
    .innerJoin('competitors as k', (j) => j.onRef('k.competition_id', '=', 'c.id').on('k.role', '=', 'home'))
    .select(['c.id', 'k.entity_id'])
    .where('c.status', '=', 'live')
    .where('c.sport', 'in', ['soccer', 'basketball'])
    .where((eb) => eb.exists(eb.selectFrom('plays as p').select('p.seq').whereRef('p.competition_id', '=', 'c.id').where('p.source', 'like', 'sim:%')))
    .execute();
  if (rows.length === 0) return [];
  const claims = await db.kysely.selectFrom('meta').selectAll().where('key', 'in', rows.map((r) => CLAIM + r.id)).execute();
  const fresh = new Set(claims.filter((c) => nowMs - Date.parse(c.value) < CLAIM_STALE_MS).map((c) => c.key.slice(CLAIM.length)));
  return rows.filter((r) => !fresh.has(r.id)).map((r) => ({ competitionId: r.id, home: r.entity_id }));
}
