import { EVENT_ID, SCORE_WITHDRAWN, type PlayWithdrawalInput } from '@svc/schema';
import { conflict, invalid } from './errors.js';

/**
 * Corrections (docs/corrections.md): which confirmed score a `score_withdrawn` play names, what
 * it moves, and which crowd scores an official final result cannot hold. Pure rules: the
 * callers read the facts inside the correction's transaction and write what these decide.
 */

/** What a `withdraws` value names: a play of the competition by its `seq`, or an event by its id. */
export type WithdrawsRef = { kind: 'play'; seq: number } | { kind: 'event'; id: string };

const SEQ = /^[1-9]\d{0,11}$/;

/** The play or event `withdraws` names, or null when it is neither form. */
export function parseWithdraws(v: string | number): WithdrawsRef | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 1 ? { kind: 'play', seq: v } : null;
  if (EVENT_ID.test(v)) return { kind: 'event', id: v };
  if (SEQ.test(v)) return { kind: 'play', seq: Number(v) };
  return null;
}

/**
 * A game is covered by an official source once it has an official play other than a
 * correction: from then on its score is the official record's (the plays' running state), and
 * its official `final` play judges the crowd. Until then it is the crowd's own game: its score
 * is the sum of its confirmed crowd scores.
 */
export const coversGame = (plays: readonly { event_type: string }[]): boolean => plays.some((p) => p.event_type !== SCORE_WITHDRAWN);

/** Whether a play counts in the box score, the leaders and a player's totals: not a correction, not withdrawn by one. */
export const countsInRecord = (p: { event_type: string; withdrawn_by?: number | null }): boolean => p.event_type !== SCORE_WITHDRAWN && (p.withdrawn_by ?? null) === null;

/** An official play as a correction reads it. */
export interface PlayOnRecord {
  seq: number;
  competitor_id: string;
  player_id: string | null;
  event_type: string;
  points: number;
  period: { unit: string; num: number; label: string };
  /** The confirmed event the play confirmed or matched. */
  event_id: string | null;
  withdrawn_by: number | null;
}

/** An event as a correction reads it. */
export interface EventOnRecord {
  id: string;
  game_id: string;
  type: string;
  tier: string;
  team: string;
  points: number;
  clock: string | null;
  /** Its `confidence.probability` (absent: 1), which its correction carries. */
  probability?: number;
}

/** The reads a withdrawal needs, inside its transaction. */
export interface CorrectionReader {
  play(seq: number): Promise<PlayOnRecord | undefined>;
  /** The non-withdrawn play that confirmed or matched this event. */
  playOfEvent(eventId: string): Promise<PlayOnRecord | undefined>;
  /** Undefined also for an event the caller may not see (another key's sandbox replay). */
  event(id: string): Promise<EventOnRecord | undefined>;
  /** The confirmed event naming this provisional in `provisional_id`. */
  confirmationOf(provisionalId: string): Promise<EventOnRecord | undefined>;
  /** Whether a correction (a confirmed `score_retracted`) already names this event. */
  retracted(eventId: string): Promise<boolean>;
}

/** The confirmed score a correction withdraws: its play, its event, or both. */
export interface Withdrawn {
  play: PlayOnRecord | null;
  event: EventOnRecord | null;
}

const PARAM = 'withdraws';

/**
 * Finds what `withdraws` names in the game, or throws the documented error: nothing
 * (`withdraws_unknown`), another game's event (`withdraws_other_game`), something that is not a
 * confirmed score (`withdraws_not_a_score`), a score withdrawn already (`already_withdrawn`). A
 * provisional that was confirmed stands for its confirmation.
 */
export async function resolveWithdrawn(gameId: string, value: string | number, read: CorrectionReader): Promise<Withdrawn> {
  const ref = parseWithdraws(value);
  const named = String(value);
  if (!ref) throw invalid('withdraws_unknown', `'withdraws' is neither a play's seq nor an event id (evt_…): '${named}'.`, PARAM);
  if (ref.kind === 'play') {
    const play = await read.play(ref.seq);
    if (!play) throw invalid('withdraws_unknown', `The competition has no play ${ref.seq}.`, PARAM);
    if (play.event_type === SCORE_WITHDRAWN || play.points <= 0) throw invalid('withdraws_not_a_score', `Play ${ref.seq} (${play.event_type}) scored nothing to withdraw.`, PARAM);
    if (play.withdrawn_by !== null) throw conflict('already_withdrawn', `Play ${ref.seq} was withdrawn by play ${play.withdrawn_by}.`, PARAM);
    const event = play.event_id !== null ? await read.event(play.event_id) : undefined;
    // Its event corrected on its own already (the play's link was missing then): only the play is left to withdraw.
    const open = event && !(await read.retracted(event.id)) ? event : null;
    return { play, event: open };
  }
  let event = await read.event(ref.id);
  if (!event) throw invalid('withdraws_unknown', `No event '${ref.id}'.`, PARAM);
  if (event.game_id !== gameId) throw invalid('withdraws_other_game', `Event '${ref.id}' is of game ${event.game_id}, not ${gameId}.`, PARAM);
  if (event.type !== 'score') throw invalid('withdraws_not_a_score', `Event '${ref.id}' is a ${event.type} event, not a score.`, PARAM);
  if (event.tier !== 'confirmed') {
    const confirmation = await read.confirmationOf(event.id);
    if (!confirmation) throw invalid('withdraws_not_a_score', `Event '${ref.id}' is a provisional score that was never confirmed.`, PARAM);
    event = confirmation;
  }
  if (await read.retracted(event.id)) throw conflict('already_withdrawn', `Event '${event.id}' was withdrawn already.`, PARAM);
  const play = (await read.playOfEvent(event.id)) ?? null;
  return { play, event };
}

/** What the game looks like to a withdrawal, inside its transaction. */
export interface GameOnRecord {
  sport: string;
  competitors: readonly { idx: number; role: string; entity_id: string; score: number }[];
  /** Whether an official source covers the game (`coversGame`). */
  covered: boolean;
  /** The official running state after the last play (by role); zeros when not covered. */
  state: Record<string, number>;
  lastSeq: number;
}

/** The correction's play row, before its competition and times are filled in. */
export interface WithdrawalPlay {
  seq: number;
  period: { unit: string; num: number; label: string };
  competitor_id: string;
  player_id: string | null;
  points: number;
  clock: string | null;
  state: Record<string, number>;
  source: string;
  ts: string | null;
  withdraws: string;
  /** The event retracted, if the score had one. */
  event_id: string | null;
}

export interface WithdrawalPlan {
  play: WithdrawalPlay;
  /** The competitors whose stored score moves. */
  scores: { idx: number; score: number }[];
  /** The confirmed event to retract, with its team and points. */
  retract: EventOnRecord | null;
}

/** A team's code as events carry it: the last part of its id (`team:wc:ARG` → `ARG`). */
export const teamCode = (entityId: string): string => entityId.slice(entityId.lastIndexOf(':') + 1);

/**
 * The correction of `withdrawn` in `game`. Its play takes the withdrawn score's competitor,
 * player and period (unless the source names a period), `points` minus the withdrawn points and
 * the score after it as `state`. A covered game's score is the official record's: it moves back
 * only when an official play is withdrawn. The crowd's own game's score moves back by the crowd
 * score withdrawn.
 */
export function planWithdrawal(game: GameOnRecord, withdrawn: Withdrawn, input: PlayWithdrawalInput): WithdrawalPlan {
  const { play, event } = withdrawn;
  const who = play ? game.competitors.find((c) => c.entity_id === play.competitor_id) : game.competitors.find((c) => event !== null && teamCode(c.entity_id) === event.team);
  const points = play?.points ?? event?.points ?? 0;
  if (!who) throw invalid('withdraws_not_a_score', 'The withdrawn score names no competitor of the competition.', PARAM);
  if (input.competitor_id !== undefined && input.competitor_id !== who.entity_id) {
    throw invalid('invalid_field', `The withdrawn score was ${who.entity_id}'s, not ${input.competitor_id}'s.`, 'competitor_id');
  }
  if (input.points !== undefined && input.points !== 0 && input.points !== points) {
    throw invalid('invalid_field', `The withdrawn score was worth ${points}; 'points' may be left out, 0 or ${points}.`, 'points');
  }
  let scores: { idx: number; score: number }[];
  let state: Record<string, number>;
  if (game.covered) {
    state = { ...game.state };
    if (play) state[who.role] = (state[who.role] ?? 0) - points;
    scores = game.competitors.filter((c) => (state[c.role] ?? c.score) !== c.score).map((c) => ({ idx: c.idx, score: state[c.role] ?? c.score }));
  } else {
    scores = [{ idx: who.idx, score: Math.max(0, who.score - points) }];
    state = Object.fromEntries(game.competitors.map((c) => [c.role, c.idx === who.idx ? Math.max(0, c.score - points) : c.score]));
  }
  return {
    play: {
      seq: game.lastSeq + 1,
      period: input.period ?? play?.period ?? crowdPeriod(game.sport, event?.clock ?? null, null),
      competitor_id: who.entity_id,
      player_id: play?.player_id ?? null,
      points: -points,
      clock: input.clock ?? null,
      state,
      source: input.source ?? 'official',
      ts: input.ts ?? null,
      withdraws: String(input.withdraws),
      event_id: event?.id ?? null,
    },
    scores,
    retract: event,
  };
}

/**
 * The crowd scores an official final result cannot hold, to withdraw when the `final` play
 * arrives. Per team: the final score, less the points of the scores official plays stand
 * behind, leaves room for crowd scores no official play matched; they are kept in the order
 * they were confirmed while they fit, and the rest are withdrawn (a crowd score the official
 * record never had, or had again as a play of its own).
 */
export function contradictedByFinal(
  finalScore: ReadonlyMap<string, number>,
  held: readonly { team: string; points: number }[],
  crowd: readonly { id: string; team: string; points: number }[],
): string[] {
  const room = new Map(finalScore);
  for (const h of held) room.set(h.team, (room.get(h.team) ?? 0) - h.points);
  const out: string[] = [];
  for (const c of crowd) {
    const left = room.get(c.team) ?? 0;
    if (c.points <= left) room.set(c.team, left - c.points);
    else out.push(c.id);
  }
  return out;
}

type Period = { unit: string; num: number; label: string };

const SOCCER_PERIODS: readonly (Period & { until: number })[] = [
  { unit: 'half', num: 1, label: '1st half', until: 45 },
  { unit: 'half', num: 2, label: '2nd half', until: 90 },
  { unit: 'extra_time', num: 1, label: 'Extra time 1st half', until: 105 },
  { unit: 'extra_time', num: 2, label: 'Extra time 2nd half', until: 120 },
];
const FIRST_PERIOD: Record<string, Period> = {
  soccer: { unit: 'half', num: 1, label: '1st half' },
  basketball: { unit: 'quarter', num: 1, label: 'Q1' },
};
/** A soccer clock as reporters and feeds write it: `67'`, `45+2'`. */
const SOCCER_MINUTE = /^\s*(\d{1,3})\s*(?:\+\s*\d{1,2})?\s*'?\s*$/;

/**
 * The period of a crowd score, which reports do not name (docs/standings.md): a soccer clock's
 * minute places it (45+2' in the first half); otherwise the period of the score before it, else
 * the sport's first period.
 */
export function crowdPeriod(sport: string, clock: string | null, previous: Period | null): Period {
  if (sport === 'soccer' && clock !== null) {
    const m = SOCCER_MINUTE.exec(clock);
    if (m) {
      const minute = Number(m[1]);
      const p = SOCCER_PERIODS.find((x) => minute <= x.until) ?? SOCCER_PERIODS[SOCCER_PERIODS.length - 1];
      return { unit: p.unit, num: p.num, label: p.label };
    }
  }
  return previous ?? FIRST_PERIOD[sport] ?? { unit: 'period', num: 1, label: 'Period 1' };
}
