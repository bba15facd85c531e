import type { CompetitionTable } from '../store/reference/types.js';
import { addMinutes, fullTime, playRow, scoreEvent, type Period } from './plays.js';
import { emptyRows, type Rows } from './rows.js';

export type Side = 'home' | 'away';

export interface TeamRef {
  id: string;
  code: string;
}

export interface SoccerGoal {
  /** The side the goal counts for (for an own goal: the opponent of the scorer). */
  side: Side;
  playerId: string | null;
  minute: number | null;
  /** Stoppage-time offset when the source states one ("90+3"); null otherwise. */
  offset: number | null;
  penalty: boolean;
  ownGoal: boolean;
}

export interface SoccerMatch {
  league: 'wc' | 'intl';
  year: number;
  date: string;
  startTime: string | null;
  name: string;
  /** The tournament group of a group-stage match (`Group A`), else null. */
  group: string | null;
  venueId: string | null;
  home: TeamRef;
  away: TeamRef;
  /** Home and away team names as the source spells them. */
  names: [string, string];
  /** Final score after extra time (a shoot-out is not part of it); null when the source has none. */
  score: [number, number] | null;
  extraTime: boolean;
  shootout: { winner: Side; home: number | null; away: number | null } | null;
  goals: SoccerGoal[];
  sourceKey: string;
  source: 'openfootball' | 'martj42';
  /** Position in its source file: the tie-break after date and kick-off time. */
  order: number;
}

const PERIODS: Period[] = [
  { unit: 'half', num: 1, label: '1st half' },
  { unit: 'half', num: 2, label: '2nd half' },
  { unit: 'extra_time', num: 1, label: 'Extra time 1st half' },
  { unit: 'extra_time', num: 2, label: 'Extra time 2nd half' },
];
// Minutes of breaks before each period starts (half-time 15, before extra time 5, its break ~0).
const BREAK_BEFORE = [0, 15, 20, 20];

export interface GoalTiming {
  period: Period;
  clock: string | null;
  /** Sort key within the match. */
  key: number;
  /** Minutes after kick-off, for the play's timestamp. */
  elapsed: number;
}

/**
 * Places a goal in a period. A stated offset means stoppage time of the period its minute ends
 * (45+2 → 1st half). Without an offset, a minute past 90 is extra time only in matches that had
 * extra time; otherwise it is stoppage time of the 2nd half (results.csv writes 90+3 as 93).
 */
export function goalTiming(minute: number | null, offset: number | null, extraTime: boolean): GoalTiming {
  if (minute === null) return { period: PERIODS[1], clock: null, key: 1e6, elapsed: 90 };
  let base = minute;
  let off = offset ?? 0;
  if (offset === null && base > 90 && !extraTime) {
    off = base - 90;
    base = 90;
  }
  const idx = base <= 45 ? 0 : base <= 90 ? 1 : base <= 105 ? 2 : 3;
  return {
    period: PERIODS[idx],
    clock: off > 0 ? `${base}+${off}'` : `${base}'`,
    key: idx * 10_000 + base * 100 + off,
    elapsed: base + off + BREAK_BEFORE[idx],
  };
}

/** "67" → 67/null, "90+4" → 90/4, 45 (with offset 2) → 45/2, "" → null. */
export function parseMinute(minute: number | string, offset?: number): { minute: number | null; offset: number | null } {
  if (typeof minute === 'number') return { minute, offset: offset ?? null };
  const m = /^\s*(\d+)\s*(?:\+\s*(\d+))?\s*'?\s*$/.exec(minute);
  if (!m) return { minute: null, offset: null };
  return { minute: Number(m[1]), offset: m[2] !== undefined ? Number(m[2]) : (offset ?? null) };
}

export const goalEventType = (g: SoccerGoal): string => (g.ownGoal ? 'own_goal' : g.penalty ? 'penalty_goal' : 'goal');

export interface SoccerStats {
  /** Final matches whose goal list does not add up to the final score although it has goals. */
  inconsistent: string[];
  /** Final matches with goals in the score but no goal list at all. */
  withoutGoals: number;
  /** Past matches without a score in the source: not imported (a result is never invented). */
  skippedNoScore: number;
}

export const emptyStats = (): SoccerStats => ({ inconsistent: [], withoutGoals: 0, skippedNoScore: 0 });

/**
 * Rows for one match: the competition, its two competitors and, when it is final, one play per
 * goal with the running score, a shoot-out play, the `final` play and one confirmed event per goal.
 */
export function matchRows(m: SoccerMatch, n: number, today: string, stats: SoccerStats): Rows {
  const rows = emptyRows();
  const final = m.date < today && m.score !== null;
  const c: CompetitionTable = {
    id: `soccer_${m.league}_${n}`,
    sport: 'soccer',
    league: m.league,
    season_id: `${m.league}_${m.year}`,
    n,
    date: m.date,
    start_time: m.startTime,
    status: final ? 'final' : 'scheduled',
    venue_id: m.venueId,
    name: m.name,
    group_name: m.group,
    synthetic: 0,
    source_key: m.sourceKey,
  };
  rows.competitions.push(c);
  const [hs, as] = final && m.score ? m.score : [0, 0];
  rows.competitors.push(
    { competition_id: c.id, idx: 0, entity_type: 'team', entity_id: m.home.id, role: 'home', score: hs },
    { competition_id: c.id, idx: 1, entity_type: 'team', entity_id: m.away.id, role: 'away', score: as },
  );
  if (!final) return rows;

  const counted = { home: 0, away: 0 };
  for (const g of m.goals) counted[g.side]++;
  if (m.goals.length === 0 && hs + as > 0) stats.withoutGoals++;
  else if (counted.home !== hs || counted.away !== as) stats.inconsistent.push(m.sourceKey);

  const kickoff = m.startTime ?? `${m.date}T12:00:00.000Z`;
  const team = (side: Side): TeamRef => (side === 'home' ? m.home : m.away);
  const source = m.source;
  const timed = m.goals
    .map((g, i) => ({ g, i, t: goalTiming(g.minute, g.offset, m.extraTime) }))
    .sort((a, b) => a.t.key - b.t.key || a.i - b.i);
  const state: Record<string, number> = { home: 0, away: 0 };
  let seq = 0;
  let elapsed = 0;
  for (const { g, t } of timed) {
    state[g.side]++;
    elapsed = Math.max(elapsed, t.elapsed);
    const play = playRow(c.id, {
      seq: ++seq,
      period: t.period,
      competitorId: team(g.side).id,
      playerId: g.playerId,
      eventType: goalEventType(g),
      points: 1,
      clock: t.clock,
      state,
      source,
      ts: addMinutes(kickoff, elapsed),
    });
    rows.plays.push(play);
    rows.events.push(scoreEvent(c, play, team(g.side).code));
  }
  const finalState: Record<string, number> = { home: hs, away: as };
  elapsed = Math.max(elapsed, m.extraTime ? 145 : 110);
  if (m.shootout) {
    if (m.shootout.home !== null && m.shootout.away !== null) {
      finalState.home_shootout = m.shootout.home;
      finalState.away_shootout = m.shootout.away;
    }
    elapsed += 15;
    rows.plays.push(
      playRow(c.id, {
        seq: ++seq,
        period: { unit: 'shootout', num: 1, label: 'Penalty shoot-out' },
        competitorId: team(m.shootout.winner).id,
        playerId: null,
        eventType: 'shootout',
        points: 0,
        clock: null,
        state: finalState,
        source,
        ts: addMinutes(kickoff, elapsed),
      }),
    );
  }
  rows.plays.push(
    playRow(c.id, {
      seq: ++seq,
      period: fullTime(),
      competitorId: m.home.id,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: null,
      state: finalState,
      source,
      ts: addMinutes(kickoff, elapsed + 1),
    }),
  );
  return rows;
}

/** Chronological order for numbering: date, kick-off (unknown last), World Cup before results.csv, file order. */
export function compareMatches(a: SoccerMatch, b: SoccerMatch): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  const ta = a.startTime ?? '~';
  const tb = b.startTime ?? '~';
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.league !== b.league) return a.league === 'wc' ? -1 : 1;
  return a.order - b.order;
}
