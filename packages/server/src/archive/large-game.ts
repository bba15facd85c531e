import type { CompetitionTable } from '../store/reference/types.js';
import { playRow, scoreEvent } from './plays.js';
import type { Prng } from './prng.js';
import type { Rows } from './rows.js';
import { competitorRows, countdown, SYNTHETIC_SOURCE } from './synthetic-common.js';

export interface LargeTeam {
  id: string;
  code: string;
}

const QUARTER_S = 720;
/** Wall-clock minutes from tip-off to the start of each quarter (breaks and half-time included). */
const QUARTER_START_MIN = [0, 32, 77, 109];
const QUARTER_REAL_MIN = 28;

/** Points of one scoring play: about 20 % free throws, 55 % twos, 25 % threes. */
function shot(prng: Prng): { type: string; points: number } {
  const u = prng.next();
  if (u < 0.2) return { type: 'free_throw', points: 1 };
  if (u < 0.75) return { type: 'two_pointer', points: 2 };
  return { type: 'three_pointer', points: 3 };
}

/**
 * One final basketball game with exactly `scoring` scoring plays, each also stored as its
 * confirmed event, plus the closing `final` play. Kept deliberately simple: the generator exists
 * to fill an archive quickly and reproducibly, not to model the sport.
 */
export function largeGame(prng: Prng, c: CompetitionTable, home: LargeTeam, away: LargeTeam, scoring: number, rows: Rows): void {
  const tipOff = Date.parse(c.start_time ?? `${c.date}T18:00:00.000Z`);
  const state = { home: 0, away: 0 };
  // Spread the plays evenly over four quarters, with increasing game-clock times inside each.
  const times = Array.from({ length: scoring }, () => prng.next() * 4 * QUARTER_S).sort((a, b) => a - b);
  let last = tipOff;
  times.forEach((t, i) => {
    const q = Math.min(3, Math.floor(t / QUARTER_S));
    const inQuarter = t - q * QUARTER_S;
    const side = prng.chance(0.5) ? 'home' : 'away';
    const team = side === 'home' ? home : away;
    const s = shot(prng);
    state[side] += s.points;
    last = Math.max(last + 1000, tipOff + Math.round((QUARTER_START_MIN[q] + (inQuarter / QUARTER_S) * QUARTER_REAL_MIN) * 60_000));
    const play = playRow(c.id, {
      seq: i + 1,
      period: { unit: 'quarter', num: q + 1, label: `Q${q + 1}` },
      competitorId: team.id,
      playerId: null,
      eventType: s.type,
      points: s.points,
      clock: countdown(QUARTER_S - inQuarter),
      state,
      source: SYNTHETIC_SOURCE,
      ts: new Date(last).toISOString(),
    });
    rows.plays.push(play);
    rows.events.push(scoreEvent(c, play, team.code));
  });
  rows.plays.push(
    playRow(c.id, {
      seq: scoring + 1,
      period: { unit: 'fulltime', num: 1, label: 'Full time' },
      competitorId: home.id,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: '00:00',
      state,
      source: SYNTHETIC_SOURCE,
      ts: new Date(last + 60_000).toISOString(),
    }),
  );
  rows.competitors.push(
    ...competitorRows(c.id, 'team', [
      { id: home.id, role: 'home', score: state.home },
      { id: away.id, role: 'away', score: state.away },
    ]),
  );
}
