import type { CompetitionTable } from '../store/reference/types.js';
import { fullTime, playRow, scoreEvent, type Period } from './plays.js';
import { PlayerBook } from './players.js';
import { Prng } from './prng.js';
import { emptyRows, type Rows } from './rows.js';
import {
  addDays,
  at,
  competitorRows,
  countdown,
  inventNames,
  SYNTHETIC_SOURCE,
  syntheticCompetition,
  syntheticVenue,
} from './synthetic-common.js';
import { externalIds } from './teams.js';

const LEAGUE = 'sbl';
const SEASON = 'sbl_2026';
const FIRST_ROUND = '2026-01-10';
const TIP_OFFS = ['16:00', '18:30', '21:00', '23:30'];

const TEAMS: readonly [string, string, string][] = [
  ['HAR', 'Harborview Herons', 'Harborview'],
  ['PIN', 'Pinecrest Comets', 'Pinecrest'],
  ['RED', 'Redstone Rovers', 'Redstone'],
  ['LAK', 'Lakemont Lynx', 'Lakemont'],
  ['SIL', 'Silverbay Sharks', 'Silverbay'],
  ['NGK', 'Northgate Knights', 'Northgate'],
  ['EAS', 'Eastfield Embers', 'Eastfield'],
  ['WES', 'Westbrook Wolves', 'Westbrook'],
];
const POSITIONS = ['PG', 'SG', 'SF', 'PF', 'C'] as const;
type Position = (typeof POSITIONS)[number];
type Shot = 'free_throw' | 'two_pointer' | 'three_pointer';
const POINTS: Record<Shot, number> = { free_throw: 1, two_pointer: 2, three_pointer: 3 };
// Who takes which shot: guards shoot threes, bigs score inside.
const SHOT_WEIGHT: Record<Shot, Record<Position, number>> = {
  three_pointer: { PG: 3, SG: 4, SF: 3, PF: 1.5, C: 0.5 },
  two_pointer: { PG: 2, SG: 2, SF: 2.5, PF: 3, C: 3.5 },
  free_throw: { PG: 2, SG: 2, SF: 2, PF: 2, C: 2 },
};

interface BTeam {
  id: string;
  code: string;
  venueId: string;
  strength: number;
  roster: { id: string; pos: Position; starter: boolean }[];
}

interface Scoring {
  t: number;
  side: 'home' | 'away';
  shot: Shot;
}

/** Double round robin by the circle method: 14 rounds of 4 games, each team 7 home and 7 away. */
export function roundRobin(teams: number): [number, number][][] {
  const idx = Array.from({ length: teams }, (_, i) => i);
  const rounds: [number, number][][] = [];
  for (let r = 0; r < teams - 1; r++) {
    const round: [number, number][] = [];
    for (let i = 0; i < teams / 2; i++) {
      const a = idx[i];
      const b = idx[teams - 1 - i];
      round.push(r % 2 === 0 ? [a, b] : [b, a]);
    }
    rounds.push(round);
    idx.splice(1, 0, idx.pop() ?? 0);
  }
  return [...rounds, ...rounds.map((round) => round.map(([a, b]): [number, number] => [b, a]))];
}

function period(i: number): { period: Period; seconds: number; realStart: number; realLength: number } {
  if (i < 4) return { period: { unit: 'quarter', num: i + 1, label: `Q${i + 1}` }, seconds: 720, realStart: i * 32 + (i >= 2 ? 13 : 0), realLength: 28 };
  const ot = i - 3;
  return { period: { unit: 'overtime', num: ot, label: `OT${ot}` }, seconds: 300, realStart: 4 * 32 + 13 + (ot - 1) * 15, realLength: 12 };
}

/** Scoring actions of one side in one period, adding up to `target` points. */
function sideScoring(prng: Prng, side: 'home' | 'away', target: number, seconds: number): Scoring[] {
  const out: Scoring[] = [];
  let pts = 0;
  while (pts < target) {
    const left = target - pts;
    const t = prng.next() * seconds;
    const u = prng.next();
    if (u < 0.2 || left === 1) {
      const made = left >= 2 && prng.chance(0.85) ? 2 : 1;
      for (let k = 0; k < made; k++) out.push({ t, side, shot: 'free_throw' });
      pts += made;
    } else if (u < 0.52 && left >= 3) {
      out.push({ t, side, shot: 'three_pointer' });
      pts += 3;
    } else {
      out.push({ t, side, shot: 'two_pointer' });
      pts += 2;
    }
  }
  return out;
}

function scorer(prng: Prng, team: BTeam, shot: Shot): string {
  const weights = team.roster.map((p) => SHOT_WEIGHT[shot][p.pos] * (p.starter ? 2.5 : 1));
  let r = prng.next() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (r < 0) return team.roster[i].id;
  }
  return team.roster[team.roster.length - 1].id;
}

function playGame(prng: Prng, c: CompetitionTable, home: BTeam, away: BTeam, rows: Rows): [number, number] {
  const total = { home: 0, away: 0 };
  const plays: { p: ReturnType<typeof period>; s: Scoring; player: string }[] = [];
  for (let i = 0; ; i++) {
    if (i >= 4 && total.home !== total.away) break;
    const p = period(i);
    const base = i < 4 ? 26.5 : 10;
    const target = (side: 'home' | 'away', team: BTeam): number =>
      Math.max(i < 4 ? 16 : 4, Math.round(base + team.strength / 4 + (side === 'home' ? 0.75 : 0) + prng.normal() * (i < 4 ? 4 : 3)));
    // A sixth overtime is decided by one free throw for the home side, so a game always ends.
    const scoring =
      i >= 9
        ? [{ t: 10, side: 'home' as const, shot: 'free_throw' as const }]
        : [...sideScoring(prng, 'home', target('home', home), p.seconds), ...sideScoring(prng, 'away', target('away', away), p.seconds)];
    scoring.sort((a, b) => a.t - b.t);
    for (const s of scoring) {
      total[s.side] += POINTS[s.shot];
      plays.push({ p, s, player: scorer(prng, s.side === 'home' ? home : away, s.shot) });
    }
  }
  if (c.status !== 'final') return [0, 0];
  const kickoff = Date.parse(c.start_time ?? `${c.date}T18:00:00.000Z`);
  const state = { home: 0, away: 0 };
  let seq = 0;
  let last = kickoff;
  for (const { p, s, player } of plays) {
    state[s.side] += POINTS[s.shot];
    const team = s.side === 'home' ? home : away;
    last = Math.max(last, kickoff + Math.round((p.realStart + (s.t / p.seconds) * p.realLength) * 60_000));
    const play = playRow(c.id, {
      seq: ++seq,
      period: p.period,
      competitorId: team.id,
      playerId: player,
      eventType: s.shot,
      points: POINTS[s.shot],
      clock: countdown(p.seconds - s.t),
      state,
      source: SYNTHETIC_SOURCE,
      ts: new Date(last).toISOString(),
    });
    rows.plays.push(play);
    rows.events.push(scoreEvent(c, play, team.code));
  }
  rows.plays.push(
    playRow(c.id, {
      seq: ++seq,
      period: fullTime(),
      competitorId: home.id,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: '00:00',
      state: total,
      source: SYNTHETIC_SOURCE,
      ts: new Date(last + 60_000).toISOString(),
    }),
  );
  return [total.home, total.away];
}

/** Synthetic Basketball League: 8 teams, 12 players each, a 56-game 2026 season with play-by-play. */
export function buildBasketball(seed: number, today: string): Rows {
  const prng = new Prng(seed);
  const rows = emptyRows();
  const book = new PlayerBook(LEAGUE, 'basketball', 1);
  const taken = new Set<string>();
  const teams: BTeam[] = TEAMS.map(([code, name, city]) => {
    const venue = syntheticVenue(prng, `${city} Arena`, city, prng.int(14, 21) * 1000);
    rows.venues.push(venue);
    const id = `team:${LEAGUE}:${code}`;
    rows.teams.push({ id, sport: 'basketball', league: LEAGUE, name, code, venue_id: venue.id, external_ids: externalIds({}), synthetic: 1 });
    const jerseys = prng.shuffle(Array.from({ length: 55 }, (_, i) => i)).slice(0, 12);
    const roster = inventNames(prng, 12, taken).map((pname, i) => {
      const pos: Position = i < 10 ? POSITIONS[i % 5] : prng.pick(POSITIONS);
      const pid = book.ensure(pname, { position: pos });
      book.roster(id, pid, SEASON, jerseys[i], pos);
      return { id: pid, pos, starter: i < 5 };
    });
    return { id, code, venueId: venue.id, strength: prng.normal() * 4, roster };
  });
  rows.players.push(...book.rows);
  rows.rosters.push(...book.rosters());

  let n = 0;
  roundRobin(teams.length).forEach((round, r) => {
    const date = addDays(FIRST_ROUND, r * 7);
    round.forEach(([h, a], g) => {
      const home = teams[h];
      const away = teams[a];
      const c = syntheticCompetition({
        sport: 'basketball',
        league: LEAGUE,
        n: ++n,
        date,
        startTime: at(date, TIP_OFFS[g]),
        venueId: home.venueId,
        name: `Synthetic Basketball League 2026 · Round ${r + 1}`,
        final: date < today,
        sourceKey: `syn:sbl:2026:${r + 1}:${home.code}:${away.code}`,
      });
      rows.competitions.push(c);
      const [hs, as] = playGame(prng, c, home, away, rows);
      rows.competitors.push(
        ...competitorRows(c.id, 'team', [
          { id: home.id, role: 'home', score: hs },
          { id: away.id, role: 'away', score: as },
        ]),
      );
    });
  });
  return rows;
}
