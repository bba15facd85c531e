import { fullTime, playRow } from './plays.js';
import { PlayerBook } from './players.js';
import { Prng } from './prng.js';
import { emptyRows, type Rows } from './rows.js';
import { addDays, at, competitorRows, hhmm, inventNames, SYNTHETIC_SOURCE, syntheticCompetition, syntheticVenue } from './synthetic-common.js';

const LEAGUE = 'sgt';
const TOURNAMENTS = [
  { name: 'Desert Classic', start: '2026-01-22', course: 'Sandhollow Links' },
  { name: 'Coastal Invitational', start: '2026-02-26', course: 'Gullrock Golf Club' },
  { name: 'Highland Championship', start: '2026-04-02', course: 'Thistlemoor Course' },
  { name: 'Lakeside Masters', start: '2026-05-07', course: 'Bluewater Greens' },
];

export interface Golfer {
  id: string;
  skill: number;
}

export const golfRound = (prng: Prng, g: Golfer): number => Math.max(62, Math.min(84, Math.round(72 - g.skill * 1.5 + prng.normal() * 3)));

/** One `round` play per competitor as they post their score (state: strokes by role), then `final`. */
export function golfPlays(rows: Rows, competitionId: string, start: string, roundNum: number, field: Golfer[], strokes: number[]): void {
  const state: Record<string, number> = Object.fromEntries(field.map((_, i) => [`p${i + 1}`, 0]));
  const t0 = Date.parse(start);
  field.forEach((g, i) => {
    state[`p${i + 1}`] = strokes[i];
    rows.plays.push(
      playRow(competitionId, {
        seq: i + 1,
        period: { unit: 'round', num: roundNum, label: `Round ${roundNum}` },
        competitorId: g.id,
        playerId: g.id,
        eventType: 'round',
        points: strokes[i],
        clock: null,
        state,
        source: SYNTHETIC_SOURCE,
        // Groups tee off 10 minutes apart and take about 4.5 hours.
        ts: new Date(t0 + (270 + i * 10) * 60_000).toISOString(),
      }),
    );
  });
  const best = strokes.indexOf(Math.min(...strokes));
  rows.plays.push(
    playRow(competitionId, {
      seq: field.length + 1,
      period: fullTime('Final'),
      competitorId: field[best].id,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: null,
      state,
      source: SYNTHETIC_SOURCE,
      ts: new Date(t0 + (271 + field.length * 10) * 60_000).toISOString(),
    }),
  );
}

/** Synthetic Golf Tour: 40 players, four 4-round tournaments with fields of 12–18 (roles p1..pN). */
export function buildGolf(seed: number, today: string): Rows {
  const prng = new Prng(seed);
  const rows = emptyRows();
  const book = new PlayerBook(LEAGUE, 'golf', 1);
  const golfers: Golfer[] = inventNames(prng, 40, new Set()).map((name) => ({ id: book.ensure(name), skill: prng.normal() }));
  rows.players.push(...book.rows);
  let n = 0;
  for (const t of TOURNAMENTS) {
    const venue = syntheticVenue(prng, t.course, t.course.split(' ')[0], prng.int(20, 40) * 1000);
    rows.venues.push(venue);
    const field = prng.shuffle(golfers).slice(0, prng.int(12, 18));
    for (let r = 1; r <= 4; r++) {
      const date = addDays(t.start, r - 1);
      const start = at(date, hhmm(12 * 60 + (r % 2) * 30));
      const strokes = field.map((g) => golfRound(prng, g));
      const final = date < today;
      const c = syntheticCompetition({
        sport: 'golf',
        league: LEAGUE,
        n: ++n,
        date,
        startTime: start,
        venueId: venue.id,
        name: `Synthetic Golf Tour 2026 · ${t.name} · Round ${r}`,
        final,
        sourceKey: `syn:sgt:2026:${t.name}:${r}`,
      });
      rows.competitions.push(c);
      if (final) golfPlays(rows, c.id, start, r, field, strokes);
      rows.competitors.push(...competitorRows(c.id, 'player', field.map((g, i) => ({ id: g.id, role: `p${i + 1}`, score: final ? strokes[i] : 0 }))));
    }
  }
  return rows;
}
