import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCoords } from '../src/archive/coords.js';
import { parseCsv } from '../src/archive/csv.js';
import { ensureSchedule, importArchive, type ImportSummary } from '../src/archive/index.js';
import { goalTiming, parseMinute } from '../src/archive/soccer.js';
import { loadWorldCup, readCsv, WC_YEARS } from '../src/archive/sources.js';
import { tmpDir as helperTmpDir } from './helpers.js';
import { canonicalTeamName, CodeAllocator } from '../src/archive/teams.js';
import { kickoffUtc, parseUtcOffset } from '../src/archive/venues.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { PG_ADMIN_URL, pgReachable } from './templates.setup.js';

const TODAY = '2026-11-22';
const SPORTS = ['soccer', 'basketball', 'tennis', 'golf', 'mma'];
const GOALS = ['goal', 'penalty_goal', 'own_goal'];

const tmpDir = (): string => helperTmpDir('svc-archive-');
const state = (json: string): Record<string, number> => JSON.parse(json);

async function importInto(dataDir: string, databaseUrl: string | null = null): Promise<{ db: Db; summary: ImportSummary; log: string[] }> {
  const db = await openDb({ dataDir, databaseUrl, poolSize: 4 });
  const log: string[] = [];
  const summary = await importArchive(db, { today: TODAY, log: (l) => log.push(l) });
  return { db, summary, log };
}

async function wcMatchesPerYear(db: Db): Promise<Record<string, number>> {
  const rows = await db.kysely
    .selectFrom('competitions')
    .select(['season_id', (eb) => eb.fn.countAll().as('n')])
    .where('league', '=', 'wc')
    .groupBy('season_id')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.season_id, Number(r.n)]));
}

/** Every competition with its competitors' scores, in id order: a fingerprint of the import. */
async function fingerprint(db: Db): Promise<string[]> {
  const rows = await db.kysely
    .selectFrom('competitions')
    .innerJoin('competitors', 'competitors.competition_id', 'competitions.id')
    .select(['competitions.id', 'competitions.status', 'competitions.date', 'competitors.role', 'competitors.entity_id', 'competitors.score'])
    .execute();
  // Sorted here, not in SQL: PostgreSQL's collation orders text differently from SQLite's.
  return rows.map((r) => `${r.id}|${r.status}|${r.date}|${r.role}|${r.entity_id}|${r.score}`).sort();
}


describe('archive helpers', () => {
  it('parses degrees-minutes-seconds coordinates, S and W negative', () => {
    expect(parseCoords(`22°54'44"S 43°13'49"W`)).toEqual({ lat: -22.912222, lng: -43.230278 });
    expect(parseCoords(`25°25'15.1"N 51°29'25.4"E`)).toEqual({ lat: 25.420861, lng: 51.490389 });
    expect(parseCoords(`15°47'0.60"S 47°53'56.99"W`)).toEqual({ lat: -15.783500, lng: -47.899164 });
    expect(parseCoords(`08°02'26"S 35°00'30"W`)).toEqual({ lat: -8.040556, lng: -35.008333 });
  });

  it('parses decimal coordinates with hemispheres and plain signed pairs', () => {
    expect(parseCoords('37.403°N 121.970°W')).toEqual({ lat: 37.403, lng: -121.97 });
    expect(parseCoords('5.826936°S 35.212371°W')).toEqual({ lat: -5.826936, lng: -35.212371 });
    expect(parseCoords('25.2637, 51.4483')).toEqual({ lat: 25.2637, lng: 51.4483 });
    expect(parseCoords('-33.8915 151.2262')).toEqual({ lat: -33.8915, lng: 151.2262 });
  });

  it('refuses empty, one-sided or out-of-range coordinates', () => {
    expect(parseCoords('')).toBeNull();
    expect(parseCoords(undefined)).toBeNull();
    expect(parseCoords(`22°54'44"S`)).toBeNull();
    expect(parseCoords('95, 10')).toBeNull();
  });

  it('reads quoted CSV fields', () => {
    expect(parseCsv('a,b,c\n1,"x, ""y""",3\r\n"multi\nline",,\n')).toEqual([
      { a: '1', b: 'x, "y"', c: '3' },
      { a: 'multi\nline', b: '', c: '' },
    ]);
  });

  it('turns local kick-off times into UTC', () => {
    expect(parseUtcOffset('UTC-3')).toBe(-180);
    expect(parseUtcOffset('UTC+5:30')).toBe(330);
    expect(kickoffUtc('2014-06-12', '17:00 UTC-3', null)).toBe('2014-06-12T20:00:00.000Z');
    // 2022 times carry no offset: the stadium's timezone applies.
    expect(kickoffUtc('2022-12-18', '18:00', 180)).toBe('2022-12-18T15:00:00.000Z');
    expect(kickoffUtc('2022-12-18', '18:00', null)).toBeNull();
    expect(kickoffUtc('2026-07-19', undefined, -240)).toBeNull();
  });

  it('places goals in periods and writes stoppage time as 90+n', () => {
    expect(parseMinute('90+4')).toEqual({ minute: 90, offset: 4 });
    expect(parseMinute(45, 2)).toEqual({ minute: 45, offset: 2 });
    expect(parseMinute('')).toEqual({ minute: null, offset: null });
    const t = (m: number, o: number | null, et: boolean) => {
      const g = goalTiming(m, o, et);
      return [g.period.unit, g.period.num, g.clock];
    };
    expect(t(45, 2, false)).toEqual(['half', 1, "45+2'"]);
    expect(t(46, null, false)).toEqual(['half', 2, "46'"]);
    expect(t(90, 4, false)).toEqual(['half', 2, "90+4'"]);
    expect(t(93, null, false)).toEqual(['half', 2, "90+3'"]);
    expect(t(93, null, true)).toEqual(['extra_time', 1, "93'"]);
    expect(t(118, null, true)).toEqual(['extra_time', 2, "118'"]);
    expect(goalTiming(45, 2, false).key).toBeLessThan(goalTiming(46, null, false).key);
  });

  it('maps every World Cup team name of openfootball to a results.csv team', () => {
    const intlNames = new Set(readCsv('results.csv').flatMap((r) => [r.home_team, r.away_team]));
    const names = new Set(WC_YEARS.flatMap((y) => loadWorldCup(y).matches.flatMap((m) => [m.team1, m.team2])));
    const missing = [...names].filter((n) => !intlNames.has(canonicalTeamName(n)));
    expect(missing).toEqual([]);
    expect(canonicalTeamName('USA')).toBe('United States');
    expect(canonicalTeamName('Korea Republic')).toBe('South Korea');
    expect(canonicalTeamName('IR Iran')).toBe('Iran');
    expect(canonicalTeamName("Côte d'Ivoire")).toBe('Ivory Coast');
    expect(canonicalTeamName('Bosnia-Herzegovina')).toBe('Bosnia and Herzegovina');
  });

  it('derives unique three-letter codes deterministically', () => {
    const a = new CodeAllocator();
    a.reserve('AND');
    const codes = ['Andalusia', 'Andorra', 'Papua New Guinea', 'Saint Kitts and Nevis', 'Andorra la Vella'].map((n) => a.allocate(n));
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect(c).toMatch(/^[A-Z]{3}$/);
    expect(codes[2]).toBe('PNG');
    const b = new CodeAllocator();
    b.reserve('AND');
    expect(['Andalusia', 'Andorra', 'Papua New Guinea', 'Saint Kitts and Nevis', 'Andorra la Vella'].map((n) => b.allocate(n))).toEqual(codes);
  });
});

/** The first SQLite import, for the determinism and PostgreSQL comparisons. */
let sqliteSummary: ImportSummary | undefined;
let sqliteFingerprint: string[] = [];

describe('archive import (SQLite file)', () => {
  let dir: string;
  let db: Db;
  let summary: ImportSummary;

  beforeAll(async () => {
    dir = tmpDir();
    const r = await importInto(dir);
    db = r.db;
    summary = r.summary;
    sqliteSummary = summary;
    sqliteFingerprint = await fingerprint(db);
    console.log(`archive import (sqlite): ${summary.ms} ms`, JSON.stringify(summary));
    for (const line of r.log) console.log(`  ${line}`);
  });

  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('imports within the time budget and fills every table', () => {
    expect(summary.ms).toBeLessThan(60_000);
    expect(summary.leagues).toBe(6);
    expect(summary.teams).toBeGreaterThan(300);
    expect(summary.players).toBeGreaterThan(5000);
    expect(summary.venues).toBeGreaterThanOrEqual(48);
    expect(summary.seasons).toBe(4 + 27 + 4);
    expect(summary.competitions).toBeGreaterThan(25_000);
    expect(summary.plays).toBeGreaterThan(summary.events);
    expect(summary.events).toBeGreaterThan(25_000);
  });

  it('has 64/64/64/104 World Cup matches, each at a stadium', async () => {
    expect(await wcMatchesPerYear(db)).toEqual({ wc_2014: 64, wc_2018: 64, wc_2022: 64, wc_2026: 104 });
    const noVenue = await db.kysely.selectFrom('competitions').select('id').where('league', '=', 'wc').where('venue_id', 'is', null).execute();
    expect(noVenue).toEqual([]);
  });

  it('never imports a World Cup match twice (not also in intl)', async () => {
    const rows = await db.kysely
      .selectFrom('competitions')
      .innerJoin('competitors', 'competitors.competition_id', 'competitions.id')
      .innerJoin('teams', 'teams.id', 'competitors.entity_id')
      .select(['competitions.id', 'competitions.league', 'competitions.date', 'competitions.name', 'teams.name as team'])
      .where('competitions.league', 'in', ['wc', 'intl'])
      .where('competitions.synthetic', '=', 0)
      .execute();
    const byComp = new Map<string, { league: string; date: string; name: string | null; teams: string[] }>();
    for (const r of rows) {
      const c = byComp.get(r.id) ?? { league: r.league, date: r.date, name: r.name, teams: [] };
      c.teams.push(canonicalTeamName(r.team));
      byComp.set(r.id, c);
    }
    const key = (date: string, teams: string[]) => `${date}|${[...teams].sort().join('|')}`;
    const intl = new Set([...byComp.values()].filter((c) => c.league === 'intl').map((c) => key(c.date, c.teams)));
    const shift = (d: string, days: number) => new Date(Date.parse(`${d}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    const doubled = [...byComp.values()]
      .filter((c) => c.league === 'wc')
      .filter((c) => [-1, 0, 1].some((d) => intl.has(key(shift(c.date, d), c.teams))));
    expect(doubled).toEqual([]);
    const wcInIntl = [...byComp.values()].filter((c) => c.league === 'intl' && c.name === 'FIFA World Cup' && c.date >= '2014-01-01');
    expect(wcInIntl).toEqual([]);
  });

  it('numbers soccer games 1..N chronologically across both leagues', async () => {
    const rows = await db.kysely
      .selectFrom('competitions')
      .select(['n', 'date', 'id', 'league'])
      .where('sport', '=', 'soccer')
      .where('synthetic', '=', 0)
      .orderBy('n')
      .execute();
    rows.forEach((r, i) => expect(r.n).toBe(i + 1));
    for (let i = 1; i < rows.length; i++) expect(rows[i].date >= rows[i - 1].date).toBe(true);
    for (const r of rows) expect(r.id).toBe(`soccer_${r.league}_${r.n}`);
  });

  it("ends every final soccer game with a `final` play; goal plays add up where the source's goal list is complete", async () => {
    const comps = await db.kysely
      .selectFrom('competitions')
      .innerJoin('competitors', 'competitors.competition_id', 'competitions.id')
      .select(['competitions.id', 'competitors.role', 'competitors.score'])
      .where('competitions.sport', '=', 'soccer')
      .where('competitions.status', '=', 'final')
      .execute();
    const scores = new Map<string, Record<string, number>>();
    for (const c of comps) scores.set(c.id, { ...scores.get(c.id), [c.role]: c.score });
    const plays = await db.kysely
      .selectFrom('plays')
      .select(['competition_id', 'seq', 'event_type', 'state'])
      .where('competition_id', 'like', 'soccer_%')
      .orderBy('competition_id')
      .orderBy('seq')
      .execute();
    const lastGoal = new Map<string, Record<string, number>>();
    const finals = new Map<string, { seq: number; state: Record<string, number>; count: number }>();
    const maxSeq = new Map<string, number>();
    for (const p of plays) {
      maxSeq.set(p.competition_id, p.seq);
      if (GOALS.includes(p.event_type)) lastGoal.set(p.competition_id, state(p.state));
      if (p.event_type === 'final') {
        const f = finals.get(p.competition_id);
        finals.set(p.competition_id, { seq: p.seq, state: state(p.state), count: (f?.count ?? 0) + 1 });
      }
    }
    for (const [id, s] of scores) {
      const f = finals.get(id);
      expect(f, id).toBeDefined();
      expect(f?.count).toBe(1);
      expect(f?.seq).toBe(maxSeq.get(id));
      expect([f?.state.home, f?.state.away]).toEqual([s.home, s.away]);
    }
    let consistent = 0;
    const inconsistent: string[] = [];
    for (const [id, g] of lastGoal) {
      const s = scores.get(id);
      if (s && g.home === s.home && g.away === s.away) consistent++;
      else inconsistent.push(id);
    }
    console.log(`soccer: ${consistent} games with goal plays add up, ${inconsistent.length} do not: ${inconsistent.slice(0, 20).join(', ')}`);
    console.log(`soccer: ${scores.size - lastGoal.size} final games have no goal plays (0-0 or no goal list in the source)`);
    expect(consistent / lastGoal.size).toBeGreaterThanOrEqual(0.99);
    const wcGoalless = [...scores.entries()].filter(([id, s]) => id.startsWith('soccer_wc_') && s.home + s.away > 0 && !lastGoal.has(id));
    expect(wcGoalless).toEqual([]);
  });

  it('explains the 2022 final: 3–3 after extra time, Argentina win the shoot-out 4–2', async () => {
    const c = await db.kysely.selectFrom('competitions').selectAll().where('source_key', '=', 'wc:2022:2022-12-18:Argentina:France').executeTakeFirstOrThrow();
    expect(c.name).toBe('FIFA World Cup 2022 · Final');
    expect(c.start_time).toBe('2022-12-18T15:00:00.000Z');
    expect(c.venue_id).toBe('lusail-stadium');
    const competitors = await db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', c.id).orderBy('idx').execute();
    expect(competitors.map((k) => [k.role, k.entity_id, k.score])).toEqual([
      ['home', 'team:wc:ARG', 3],
      ['away', 'team:wc:FRA', 3],
    ]);
    const plays = await db.kysely.selectFrom('plays').selectAll().where('competition_id', '=', c.id).orderBy('seq').execute();
    expect(plays.map((p) => p.event_type)).toEqual(['penalty_goal', 'goal', 'penalty_goal', 'goal', 'goal', 'penalty_goal', 'shootout', 'final']);
    const so = plays[6];
    expect(so.competitor_id).toBe('team:wc:ARG');
    expect(so.period_unit).toBe('shootout');
    expect(so.points).toBe(0);
    expect(state(so.state)).toEqual({ home: 3, away: 3, home_shootout: 4, away_shootout: 2 });
    expect(plays[4]).toMatchObject({ period_unit: 'extra_time', clock: "108'", player_id: 'player:wc:lionel-messi' });
    expect(plays.map((p) => p.ts)).toEqual([...plays.map((p) => p.ts)].sort());
  });

  it('knows Brazil 1–7 Germany (2014 semi-final): 8 goal plays, 8 events', async () => {
    const c = await db.kysely.selectFrom('competitions').selectAll().where('source_key', '=', 'wc:2014:2014-07-08:Brazil:Germany').executeTakeFirstOrThrow();
    expect(c.venue_id).toBe('estadio-mineirao');
    const plays = await db.kysely.selectFrom('plays').selectAll().where('competition_id', '=', c.id).orderBy('seq').execute();
    const goals = plays.filter((p) => GOALS.includes(p.event_type));
    expect(goals).toHaveLength(8);
    expect(goals.filter((p) => p.competitor_id === 'team:wc:GER')).toHaveLength(7);
    expect(state(goals[goals.length - 1].state)).toEqual({ home: 1, away: 7 });
    expect(goals[0]).toMatchObject({ clock: "11'", player_id: 'player:wc:thomas-muller', period_label: '1st half', source: 'openfootball' });
    const events = await db.kysely.selectFrom('events').selectAll().where('game_id', '=', `soccer_${c.n}`).orderBy('seq').execute();
    expect(events.map((e) => e.team)).toEqual(goals.map((g) => (g.competitor_id === 'team:wc:GER' ? 'GER' : 'BRA')));
    expect(events.every((e) => e.tier === 'confirmed' && e.type === 'score' && e.agreement === 1 && e.season_id === 'wc_2014')).toBe(true);
  });

  it('credits own goals to the other team and rosters the scorer with his own team', async () => {
    const opener = await db.kysely.selectFrom('competitions').select('id').where('source_key', '=', 'wc:2014:2014-06-12:Brazil:Croatia').executeTakeFirstOrThrow();
    const og = await db.kysely.selectFrom('plays').selectAll().where('competition_id', '=', opener.id).where('event_type', '=', 'own_goal').executeTakeFirstOrThrow();
    expect(og).toMatchObject({ competitor_id: 'team:wc:CRO', player_id: 'player:wc:marcelo', seq: 1 });
    expect(state(og.state)).toEqual({ home: 0, away: 1 });

    const ownGoals = await db.kysely
      .selectFrom('plays')
      .innerJoin('competitions', 'competitions.id', 'plays.competition_id')
      .select(['plays.competition_id', 'plays.competitor_id', 'plays.player_id', 'competitions.season_id'])
      .where('plays.event_type', '=', 'own_goal')
      .where('plays.player_id', 'is not', null)
      .execute();
    expect(ownGoals.length).toBeGreaterThan(100);
    const sides = await db.kysely
      .selectFrom('competitors')
      .select(['competition_id', 'entity_id'])
      .where('competition_id', 'in', [...new Set(ownGoals.map((o) => o.competition_id))])
      .execute();
    const rosters = new Set((await db.kysely.selectFrom('rosters').select(['team_id', 'player_id', 'season_id']).execute()).map((r) => `${r.team_id}|${r.player_id}|${r.season_id}`));
    const wrong = ownGoals.filter((o) => {
      const other = sides.find((s) => s.competition_id === o.competition_id && s.entity_id !== o.competitor_id);
      return !other || !rosters.has(`${other.entity_id}|${o.player_id}|${o.season_id}`);
    });
    expect(wrong).toEqual([]);
  });

  it('writes one confirmed event per scoring play, in chronological order', async () => {
    const scoring = await db.kysely
      .selectFrom('plays')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('event_type', 'in', [...GOALS, 'free_throw', 'two_pointer', 'three_pointer'])
      .executeTakeFirstOrThrow();
    expect(Number(scoring.n)).toBe(summary.events);
    const events = await db.kysely.selectFrom('events').select(['seq', 'ts', 'sport', 'game_id', 'competition_id']).orderBy('seq').execute();
    for (let i = 1; i < events.length; i++) expect(events[i].ts >= events[i - 1].ts).toBe(true);
    expect(new Set(events.map((e) => e.sport))).toEqual(new Set(['soccer', 'basketball']));
    for (const e of events.slice(0, 500)) expect(e.competition_id.replace(/_[a-z]+_(\d+)$/, '_$1')).toBe(e.game_id);
  });

  it('has the reference data the routes need', async () => {
    const bra = await db.kysely.selectFrom('teams').selectAll().where('id', 'in', ['team:wc:BRA', 'team:intl:BRA']).orderBy('id').execute();
    expect(bra.map((t) => JSON.parse(t.external_ids).fifa)).toEqual(['BRA', 'BRA']);
    const usa = await db.kysely.selectFrom('teams').selectAll().where('league', '=', 'intl').where('name', '=', 'United States').executeTakeFirstOrThrow();
    expect(usa.code).toBe('USA');
    const russia = await db.kysely.selectFrom('teams').selectAll().where('id', '=', 'team:intl:RUS').executeTakeFirstOrThrow();
    expect(JSON.parse(russia.external_ids).former_names).toBe('Soviet Union|CIS');
    const codes = await db.kysely.selectFrom('teams').select(['league', 'code']).execute();
    for (const t of codes) expect(t.code).toMatch(/^[A-Z]{3}$/);
    const messi = await db.kysely.selectFrom('rosters').selectAll().where('player_id', '=', 'player:wc:lionel-messi').where('season_id', '=', 'wc_2026').executeTakeFirstOrThrow();
    expect(messi).toMatchObject({ team_id: 'team:wc:ARG', jersey: 10, position: 'FW' });
    const maracana = await db.kysely.selectFrom('venues').selectAll().where('id', '=', 'estadio-do-maracana').executeTakeFirstOrThrow();
    expect(maracana).toMatchObject({ country: 'BR', lat: -22.912222, lng: -43.230278, synthetic: 0 });
    const seasons = await db.kysely.selectFrom('seasons').selectAll().where('league', '=', 'intl').orderBy('id').execute();
    expect(seasons.map((s) => s.label)).toEqual(Array.from({ length: 27 }, (_, i) => String(2000 + i)));
  });

  it('generates consistent synthetic games: final state = scores, points add up', async () => {
    const comps = await db.kysely
      .selectFrom('competitions')
      .innerJoin('competitors', 'competitors.competition_id', 'competitions.id')
      .select(['competitions.id', 'competitions.sport', 'competitors.role', 'competitors.entity_id', 'competitors.score'])
      .where('competitions.synthetic', '=', 1)
      .where('competitions.status', '=', 'final')
      .execute();
    const plays = await db.kysely
      .selectFrom('plays')
      .innerJoin('competitions', 'competitions.id', 'plays.competition_id')
      .select(['plays.competition_id', 'plays.seq', 'plays.competitor_id', 'plays.points', 'plays.event_type', 'plays.state', 'plays.source'])
      .where('competitions.synthetic', '=', 1)
      .orderBy('plays.competition_id')
      .orderBy('plays.seq')
      .execute();
    const perSport = new Map<string, number>();
    for (const c of comps) if (c.role === 'home' || c.role === 'red' || c.role === 'p1') perSport.set(c.sport, (perSport.get(c.sport) ?? 0) + 1);
    expect(perSport.get('basketball')).toBe(56);
    expect(perSport.get('tennis')).toBe(62);
    expect(perSport.get('golf')).toBe(16);
    expect(perSport.get('mma')).toBe(20);
    const points = new Map<string, number>();
    const finalState = new Map<string, Record<string, number>>();
    for (const p of plays) {
      expect(p.source).toBe('synthetic');
      points.set(`${p.competition_id}|${p.competitor_id}`, (points.get(`${p.competition_id}|${p.competitor_id}`) ?? 0) + p.points);
      if (p.event_type === 'final') finalState.set(p.competition_id, state(p.state));
    }
    for (const c of comps) {
      expect(finalState.get(c.id)?.[c.role], `${c.id} ${c.role}`).toBe(c.score);
      expect(points.get(`${c.id}|${c.entity_id}`) ?? 0, `${c.id} ${c.role}`).toBe(c.score);
    }
    const bb = comps.filter((c) => c.sport === 'basketball').map((c) => c.score);
    const avg = bb.reduce((a, b) => a + b, 0) / bb.length;
    expect(avg).toBeGreaterThan(95);
    expect(avg).toBeLessThan(120);
  });

  it('is idempotent: a second run adds nothing and is fast', async () => {
    const before = await fingerprint(db);
    const again = await importArchive(db, { today: TODAY });
    console.log(`archive import (sqlite, second run): ${again.ms} ms`);
    expect({ ...again, ms: 0 }).toEqual({ ...summary, ms: 0 });
    expect(again.ms).toBeLessThan(5_000);
    expect(await fingerprint(db)).toEqual(before);
  });

  it('is deterministic: a second database gets identical ids and scores', { timeout: 120_000 }, async () => {
    const other = tmpDir();
    const r = await importInto(other);
    try {
      expect({ ...r.summary, ms: 0 }).toEqual({ ...summary, ms: 0 });
      expect(await fingerprint(r.db)).toEqual(sqliteFingerprint);
    } finally {
      await r.db.close();
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('schedules the coming week in every sport, once', async () => {
    const today = await db.kysely.selectFrom('competitions').select(['sport', 'status']).where('date', '=', TODAY).execute();
    expect(new Set(today.map((c) => c.sport))).toEqual(new Set(SPORTS));
    expect(today.every((c) => c.status === 'scheduled')).toBe(true);
    expect(await ensureSchedule(db, { today: TODAY })).toBe(0);
    const created = await ensureSchedule(db, { today: '2026-11-27', days: 5 });
    // 27..29 exist already; 30 Nov, 1 and 2 Dec are new: 4 + 4 + 2 + 1 + 2 games a day.
    expect(created).toBe(3 * 13);
    expect(await ensureSchedule(db, { today: '2026-11-27', days: 5 })).toBe(0);
    const replay = await db.kysely.selectFrom('competitions').selectAll().where('source_key', '=', 'sched:soccer:2026-12-02:1').executeTakeFirstOrThrow();
    expect(replay).toMatchObject({ league: 'intl', synthetic: 1, status: 'scheduled', name: 'Simulated replay · synthetic', season_id: 'intl_2026' });
    const season = await db.kysely.selectFrom('seasons').selectAll().where('id', '=', 'intl_2026').executeTakeFirstOrThrow();
    expect(season.end_date).toBe('2026-12-02');
    const n = await db.kysely.selectFrom('competitions').select(['sport', 'n']).execute();
    expect(new Set(n.map((c) => `${c.sport}|${c.n}`)).size).toBe(n.length);
  });

  it('creates a missing season for scheduled games of a new year', async () => {
    expect(await ensureSchedule(db, { today: '2027-01-01', days: 0 })).toBe(13);
    const s = await db.kysely.selectFrom('seasons').selectAll().where('id', '=', 'sbl_2027').executeTakeFirstOrThrow();
    expect(s).toMatchObject({ label: '2027', start_date: '2027-01-01', end_date: '2027-01-01', sport: 'basketball', synthetic: 1 });
  });

});

const pgUp = await pgReachable();

/**
 * pg's Pool.end() resolves before its sockets have closed; dropping WITH (FORCE) at that moment
 * kills a closing session and the pool reports it as an uncaught error. Wait for them to go.
 */
async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const r = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (r.rows[0]?.n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

describe.skipIf(!pgUp && !process.env.CI)('archive import (PostgreSQL)', () => {
  it('imports the same archive into a fresh database', { timeout: 180_000 }, async () => {
    if (!pgUp) throw new Error(`CI is set but PostgreSQL is unreachable at ${PG_ADMIN_URL}`);
    const name = `svc_archive_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    const dir = tmpDir();
    try {
      const r = await importInto(dir, url.toString());
      try {
        console.log(`archive import (postgres): ${r.summary.ms} ms`, JSON.stringify(r.summary));
        if (!sqliteSummary) {
          // Run on its own (-t): make the SQLite reference here.
          const liteDir = tmpDir();
          const lite = await importInto(liteDir);
          sqliteSummary = lite.summary;
          sqliteFingerprint = await fingerprint(lite.db);
          await lite.db.close();
          fs.rmSync(liteDir, { recursive: true, force: true });
        }
        expect({ ...r.summary, ms: 0 }).toEqual({ ...sqliteSummary, ms: 0 });
        expect(await fingerprint(r.db)).toEqual(sqliteFingerprint);
        expect(await wcMatchesPerYear(r.db)).toEqual({ wc_2014: 64, wc_2018: 64, wc_2022: 64, wc_2026: 104 });
        const again = await importArchive(r.db, { today: TODAY });
        expect({ ...again, ms: 0 }).toEqual({ ...r.summary, ms: 0 });
      } finally {
        await r.db.close();
      }
    } finally {
      await dropDatabase(admin, name);
      await admin.end();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
