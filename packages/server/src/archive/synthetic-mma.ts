import { fullTime, playRow, type Period, type PlayInput } from './plays.js';
import { PlayerBook } from './players.js';
import { Prng } from './prng.js';
import { emptyRows, type Rows } from './rows.js';
import { at, competitorRows, hhmm, inventNames, SYNTHETIC_SOURCE, syntheticCompetition, syntheticVenue } from './synthetic-common.js';

const LEAGUE = 'smma';
const CLASSES = ['Lightweight', 'Welterweight', 'Middleweight', 'Heavyweight'];
const EVENTS = ['2026-02-14', '2026-03-21', '2026-04-25', '2026-05-30'];
const BOUTS_PER_EVENT = 5;

export interface Fighter {
  id: string;
  weightClass: string;
  skill: number;
}

export interface BoutResult {
  /** Round winners on the judges' cards, for each completed (or finishing) round. */
  rounds: ('red' | 'blue')[];
  winner: 'red' | 'blue';
  method: 'ko' | 'submission' | 'decision';
  /** Seconds into the last round for a finish. */
  finishAt: number | null;
}

export function simulateBout(prng: Prng, red: Fighter, blue: Fighter, scheduledRounds: number): BoutResult {
  const p = 1 / (1 + Math.exp(-(red.skill - blue.skill)));
  const rounds: ('red' | 'blue')[] = [];
  for (let r = 1; r <= scheduledRounds; r++) {
    const w = prng.chance(p) ? 'red' : 'blue';
    rounds.push(w);
    if (prng.chance(0.18)) return { rounds, winner: w, method: prng.chance(0.6) ? 'ko' : 'submission', finishAt: prng.int(15, 295) };
  }
  const red3 = rounds.filter((w) => w === 'red').length;
  return { rounds, winner: red3 * 2 > rounds.length ? 'red' : 'blue', method: 'decision', finishAt: null };
}

/** MMA states time as elapsed in the round ("KO at 2:31 of round 1"), not as a countdown. */
const elapsed = (s: number): string => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;

/** `round` plays (points 0, the round's winner), the method play (points 1 to the winner), then `final`. */
export function boutPlays(rows: Rows, competitionId: string, start: string, red: Fighter, blue: Fighter, b: BoutResult): [number, number] {
  const t0 = Date.parse(start);
  const fighter = (c: 'red' | 'blue'): Fighter => (c === 'red' ? red : blue);
  const state = { red: 0, blue: 0 };
  const round = (num: number): Period => ({ unit: 'round', num, label: `Round ${num}` });
  const ts = (min: number): string => new Date(t0 + Math.round(min * 60_000)).toISOString();
  const first = rows.plays.length;
  const push = (p: Omit<PlayInput, 'seq' | 'state' | 'source'>): void => {
    rows.plays.push(playRow(competitionId, { ...p, seq: rows.plays.length - first + 1, state, source: SYNTHETIC_SOURCE }));
  };
  const last = b.rounds.length;
  b.rounds.forEach((w, i) => {
    // A finished round is told by the finish itself, not by a round play.
    if (b.finishAt !== null && i === last - 1) return;
    const f = fighter(w);
    push({ period: round(i + 1), competitorId: f.id, playerId: f.id, eventType: 'round', points: 0, clock: '5:00', ts: ts(i * 6 + 5) });
  });
  state[b.winner] = 1;
  const w = fighter(b.winner);
  const end = (last - 1) * 6 + (b.finishAt !== null ? b.finishAt / 60 : 5) + 0.5;
  const clock = b.finishAt !== null ? elapsed(b.finishAt) : '5:00';
  push({ period: round(last), competitorId: w.id, playerId: w.id, eventType: b.method, points: 1, clock, ts: ts(end) });
  push({ period: fullTime('Final'), competitorId: w.id, playerId: null, eventType: 'final', points: 0, clock: null, ts: ts(end + 2) });
  return [state.red, state.blue];
}

/** Synthetic MMA: 20 fighters in four weight classes, four fight nights of five bouts (red/blue corners). */
export function buildMma(seed: number, today: string): Rows {
  const prng = new Prng(seed);
  const rows = emptyRows();
  const book = new PlayerBook(LEAGUE, 'mma', 1);
  const fighters: Fighter[] = inventNames(prng, 20, new Set()).map((name, i) => {
    const weightClass = CLASSES[i % CLASSES.length];
    return { id: book.ensure(name, { position: weightClass }), weightClass, skill: prng.normal() };
  });
  rows.players.push(...book.rows);
  const venue = syntheticVenue(prng, 'Ironside Pavilion', 'Ironside', 12_000);
  rows.venues.push(venue);
  let n = 0;
  EVENTS.forEach((date, e) => {
    for (let b = 0; b < BOUTS_PER_EVENT; b++) {
      const pool = fighters.filter((f) => f.weightClass === CLASSES[(e + b) % CLASSES.length]);
      const [red, blue] = prng.shuffle(pool);
      const main = b === BOUTS_PER_EVENT - 1;
      const result = simulateBout(prng, red, blue, main ? 5 : 3);
      const start = at(date, hhmm(19 * 60 + b * 40));
      const final = date < today;
      const c = syntheticCompetition({
        sport: 'mma',
        league: LEAGUE,
        n: ++n,
        date,
        startTime: start,
        venueId: venue.id,
        name: `Synthetic MMA 2026 · Fight Night ${e + 1} · ${main ? 'Main event' : `Bout ${b + 1}`}`,
        final,
        sourceKey: `syn:smma:2026:${e + 1}:${b + 1}`,
      });
      rows.competitions.push(c);
      const [rs, bs] = final ? boutPlays(rows, c.id, start, red, blue, result) : [0, 0];
      rows.competitors.push(
        ...competitorRows(c.id, 'player', [
          { id: red.id, role: 'red', score: rs },
          { id: blue.id, role: 'blue', score: bs },
        ]),
      );
    }
  });
  return rows;
}
