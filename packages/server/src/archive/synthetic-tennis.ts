import { fullTime, playRow } from './plays.js';
import { PlayerBook } from './players.js';
import { Prng } from './prng.js';
import { emptyRows, type Rows } from './rows.js';
import { addDays, at, competitorRows, hhmm, inventNames, SYNTHETIC_SOURCE, syntheticCompetition, syntheticVenue } from './synthetic-common.js';

const LEAGUE = 'stt';
const TOURNAMENTS = [
  { name: 'Winter Open', start: '2026-02-02', city: 'Coldwater' },
  { name: 'Spring Open', start: '2026-04-20', city: 'Marigold Bay' },
];
const ROUNDS = ['Round of 32', 'Round of 16', 'Quarter-final', 'Semi-final', 'Final'];
// Day of the tournament each round's matches start on; the 16 first-round matches take two days.
const ROUND_DAY = [0, 2, 3, 5, 6];

export interface TennisPlayer {
  id: string;
  skill: number;
}

/** Best of three sets; returns the set winners in order ('home' | 'away'). */
export function tennisSets(prng: Prng, a: TennisPlayer, b: TennisPlayer): ('home' | 'away')[] {
  const p = 1 / (1 + Math.exp(-(a.skill - b.skill)));
  const sets: ('home' | 'away')[] = [];
  const won = { home: 0, away: 0 };
  while (won.home < 2 && won.away < 2) {
    const w = prng.chance(p) ? 'home' : 'away';
    won[w]++;
    sets.push(w);
  }
  return sets;
}

export function tennisPlays(rows: Rows, competitionId: string, start: string, home: TennisPlayer, away: TennisPlayer, sets: ('home' | 'away')[]): [number, number] {
  const state = { home: 0, away: 0 };
  let seq = 0;
  const t0 = Date.parse(start);
  sets.forEach((w, i) => {
    state[w]++;
    const player = w === 'home' ? home : away;
    rows.plays.push(
      playRow(competitionId, {
        seq: ++seq,
        period: { unit: 'set', num: i + 1, label: `Set ${i + 1}` },
        competitorId: player.id,
        playerId: player.id,
        eventType: 'set',
        points: 1,
        clock: null,
        state,
        source: SYNTHETIC_SOURCE,
        ts: new Date(t0 + (i + 1) * 45 * 60_000).toISOString(),
      }),
    );
  });
  const winner = state.home > state.away ? home : away;
  rows.plays.push(
    playRow(competitionId, {
      seq: ++seq,
      period: fullTime('Final'),
      competitorId: winner.id,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: null,
      state,
      source: SYNTHETIC_SOURCE,
      ts: new Date(t0 + (sets.length * 45 + 5) * 60_000).toISOString(),
    }),
  );
  return [state.home, state.away];
}

/** Synthetic Tennis Tour: 32 players, two 32-draw knock-out tournaments (62 matches) in 2026. */
export function buildTennis(seed: number, today: string): Rows {
  const prng = new Prng(seed);
  const rows = emptyRows();
  const book = new PlayerBook(LEAGUE, 'tennis', 1);
  const players: TennisPlayer[] = inventNames(prng, 32, new Set()).map((name) => ({ id: book.ensure(name), skill: prng.normal() }));
  rows.players.push(...book.rows);
  let n = 0;
  for (const t of TOURNAMENTS) {
    const venue = syntheticVenue(prng, `${t.city} Tennis Centre`, t.city, prng.int(8, 15) * 1000);
    rows.venues.push(venue);
    let draw = prng.shuffle(players);
    ROUNDS.forEach((round, r) => {
      const next: TennisPlayer[] = [];
      for (let i = 0; i < draw.length; i += 2) {
        const home = draw[i];
        const away = draw[i + 1];
        const match = i / 2;
        // First round: 8 matches a day; later rounds all on their day, 90 minutes apart.
        const day = ROUND_DAY[r] + (r === 0 && match >= 8 ? 1 : 0);
        const date = addDays(t.start, day);
        const start = at(date, hhmm(10 * 60 + (r === 0 ? match % 8 : match) * 90));
        const sets = tennisSets(prng, home, away);
        const final = date < today;
        const c = syntheticCompetition({
          sport: 'tennis',
          league: LEAGUE,
          n: ++n,
          date,
          startTime: start,
          venueId: venue.id,
          name: `Synthetic Tennis Tour 2026 · ${t.name} · ${round}`,
          final,
          sourceKey: `syn:stt:2026:${t.name}:${r + 1}:${match + 1}`,
        });
        rows.competitions.push(c);
        const [hs, as] = final ? tennisPlays(rows, c.id, start, home, away, sets) : [0, 0];
        rows.competitors.push(
          ...competitorRows(c.id, 'player', [
            { id: home.id, role: 'home', score: hs },
            { id: away.id, role: 'away', score: as },
          ]),
        );
        next.push(sets.filter((s) => s === 'home').length === 2 ? home : away);
      }
      draw = next;
    });
  }
  return rows;
}
