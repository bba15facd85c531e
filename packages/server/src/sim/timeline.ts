import type { PlayInput } from '@svc/schema';
/**
 * Where each archived play falls in game time (seconds after kick-off / tip-off) when the game
 * is replayed. Positions come from the game clock, not from the archived timestamps, so a
 * 90-minute match lasts about 90 game minutes plus short breaks (the archive's timestamps
 * include a full half-time and, for basketball, real stoppages: ~2.3 h for 48 minutes of play).
 */

export type SimSport = 'soccer' | 'basketball';

export interface PeriodRef {
  unit: string;
  num: number;
  label: string;
}

export interface ClockedPlay {
  period: PeriodRef;
  clock: string | null;
}

/**
 * Consecutive plays at least this far apart. Two free throws share one clock reading, but a
 * crowd reporter's second report within the consensus duplicate window (5 s) would count as a
 * repeat of the first; in a real arena the second shot comes several seconds later anyway.
 */
export const MIN_GAP_S = 6;

interface SoccerPeriod {
  unit: string;
  num: number;
  startMinute: number;
  minutes: number;
  /** Stoppage time the period usually runs on for. */
  stoppage: number;
  /** Breaks are shortened (half-time 5 min) so a replay spends little time showing nothing. */
  breakAfter: number;
}

const SOCCER: SoccerPeriod[] = [
  { unit: 'half', num: 1, startMinute: 0, minutes: 45, stoppage: 3, breakAfter: 5 },
  { unit: 'half', num: 2, startMinute: 45, minutes: 45, stoppage: 5, breakAfter: 3 },
  { unit: 'extra_time', num: 1, startMinute: 90, minutes: 15, stoppage: 1, breakAfter: 1 },
  { unit: 'extra_time', num: 2, startMinute: 105, minutes: 15, stoppage: 2, breakAfter: 3 },
];

const soccerBase = (i: number): number => SOCCER.slice(0, i).reduce((s, p) => s + (p.minutes + p.stoppage + p.breakAfter) * 60, 0);
const soccerEnd = (i: number): number => soccerBase(i) + (SOCCER[i].minutes + SOCCER[i].stoppage) * 60;

/** "67'" → 67/0, "45+2'" → 45/2. */
export function soccerMinute(clock: string | null): { minute: number; offset: number } | null {
  const m = clock === null ? null : /^\s*(\d+)\s*(?:\+\s*(\d+))?\s*'?\s*$/.exec(clock);
  return m ? { minute: Number(m[1]), offset: m[2] !== undefined ? Number(m[2]) : 0 } : null;
}

/** "MM:SS" of a countdown clock → seconds left, or null. */
export function countdownSeconds(clock: string | null): number | null {
  const m = clock === null ? null : /^\s*(\d{1,2}):(\d{2})\s*$/.exec(clock);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

function soccerTimes(plays: ClockedPlay[]): number[] {
  const wentToExtraTime = plays.some((p) => p.period.unit === 'extra_time' || p.period.unit === 'shootout');
  const regularEnd = soccerEnd(wentToExtraTime ? 3 : 1);
  let last = 0;
  return plays.map((p) => {
    const i = SOCCER.findIndex((x) => x.unit === p.period.unit && x.num === p.period.num);
    let s: number;
    if (p.period.unit === 'shootout') s = Math.max(last, regularEnd) + 3 * 60;
    else if (p.period.unit === 'fulltime') s = Math.max(last + 60, regularEnd);
    else {
      const period = SOCCER[i >= 0 ? i : 1];
      const base = soccerBase(i >= 0 ? i : 1);
      const t = soccerMinute(p.clock);
      // A goal in minute 67 happened during 66:00–67:00; without a minute it goes to the end of the half.
      s = t ? base + (t.minute - period.startMinute + t.offset - 0.5) * 60 : base + (period.minutes - 0.5) * 60;
      s = Math.max(base + 30, s);
    }
    last = s;
    return s;
  });
}

const QUARTER_S = 720;
const OVERTIME_S = 300;
/** Breaks after Q1, Q2 (half-time), Q3, Q4 and every overtime, shortened like soccer's. */
const BASKETBALL_BREAKS = [60, 180, 60, 60];
const OVERTIME_BREAK = 60;

function basketballPeriod(p: PeriodRef): { base: number; length: number } {
  if (p.unit === 'overtime') {
    const base = 4 * QUARTER_S + BASKETBALL_BREAKS.reduce((a, b) => a + b, 0) + (p.num - 1) * (OVERTIME_S + OVERTIME_BREAK);
    return { base, length: OVERTIME_S };
  }
  const q = Math.min(4, Math.max(1, p.num));
  return { base: (q - 1) * QUARTER_S + BASKETBALL_BREAKS.slice(0, q - 1).reduce((a, b) => a + b, 0), length: QUARTER_S };
}

function basketballTimes(plays: ClockedPlay[]): number[] {
  let last = 0;
  let lastPeriodEnd = 4 * QUARTER_S + BASKETBALL_BREAKS.slice(0, 3).reduce((a, b) => a + b, 0);
  return plays.map((p) => {
    let s: number;
    if (p.period.unit === 'quarter' || p.period.unit === 'overtime') {
      const { base, length } = basketballPeriod(p.period);
      const left = countdownSeconds(p.clock);
      s = base + (left === null ? length / 2 : length - left);
      lastPeriodEnd = Math.max(lastPeriodEnd, base + length);
    } else s = Math.max(last + 30, lastPeriodEnd);
    last = s;
    return s;
  });
}

/**
 * Game seconds of each play, in the plays' order, non-decreasing and at least MIN_GAP_S apart
 * (the first at MIN_GAP_S or later: second 0 is the kick-off / tip-off).
 */
export function gameTimes(sport: SimSport, plays: ClockedPlay[]): number[] {
  const raw = sport === 'soccer' ? soccerTimes(plays) : basketballTimes(plays);
  const out: number[] = [];
  let prev = 0;
  for (const s of raw) {
    const t = Math.max(s, prev + MIN_GAP_S);
    out.push(t);
    prev = t;
  }
  return out;
}

/** The first period of a game, for its kick-off / tip-off play. */
export const openingPeriod = (sport: SimSport): PeriodRef =>
  sport === 'soccer' ? { unit: 'half', num: 1, label: '1st half' } : { unit: 'quarter', num: 1, label: 'Q1' };

/** The play that opens a replayed game: kick-off or tip-off at game time 0, by its home side. */
export const openingPlay = (target: { sport: SimSport; home: { entityId: string } }, ts: string, source: string): PlayInput => ({
  period: openingPeriod(target.sport),
  competitor_id: target.home.entityId,
  event_type: target.sport === 'soccer' ? 'kickoff' : 'tipoff',
  points: 0,
  clock: target.sport === 'soccer' ? "0'" : '12:00',
  ts,
  source,
});
