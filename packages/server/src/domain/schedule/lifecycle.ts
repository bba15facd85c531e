import type { CompetitionStatus } from '@svc/schema';
import { isoDate, isoTime } from '../clock.js';
import { conflict, invalid } from '../errors.js';

/**
 * The schedule lifecycle (docs/schedule.md): the only moves of a competition's status. Anything
 * else is 409 `invalid_transition`; asking for the status it already has is a no-op.
 */
export const TRANSITIONS: Readonly<Record<CompetitionStatus, readonly CompetitionStatus[]>> = {
  scheduled: ['live', 'postponed', 'cancelled'],
  live: ['final', 'suspended'],
  suspended: ['live', 'final', 'cancelled'],
  postponed: ['scheduled', 'cancelled'],
  final: [],
  cancelled: [],
};

export const canMove = (from: CompetitionStatus, to: CompetitionStatus): boolean => TRANSITIONS[from].includes(to);

/** The statuses that may carry a (new) start time in the request. */
const TAKES_START_TIME: readonly CompetitionStatus[] = ['scheduled', 'postponed'];

/**
 * How far from now a source may put a game's start (docs/schedule.md): from a day before now
 * (an announcement that comes in late) to five years ahead. A start far in the past would date a
 * game before today at once, into the archive's settled games, and year 0000 is no one's schedule.
 */
export const START_TIME_EARLIEST_MS = 86_400_000;
export const START_TIME_LATEST_MS = 5 * 365 * 86_400_000;

/** A (new) start time's bounds around `now`, or the 400 that refuses it. */
export function checkStartTime(startMs: number, now: number): void {
  const from = now - START_TIME_EARLIEST_MS;
  const to = now + START_TIME_LATEST_MS;
  if (startMs < from || startMs > to) {
    throw invalid('invalid_field', `'start_time' must be between a day before now and five years ahead (${isoTime(from)} to ${isoTime(to)}).`, 'start_time');
  }
}

/** A competition as the lifecycle sees it. */
export interface ScheduleState {
  status: CompetitionStatus;
  start_time: string | null;
  original_start_time: string | null;
  date: string;
  /** Why the last change was made (kept when only the start moves); absent is none. */
  status_reason?: string | null;
}

export interface StatusRequest {
  status: CompetitionStatus;
  start_time?: string;
  reason?: string;
}

/** What a status change writes: the competition's new columns. */
export interface StatusChange {
  previous_status: CompetitionStatus;
  status: CompetitionStatus;
  start_time: string | null;
  original_start_time: string | null;
  /** The competition's date follows its start time (the UTC day). */
  date: string;
  status_reason: string | null;
}

/**
 * The change `req` makes to `c`, or null when it makes none: `c` already has the status and the
 * request moves no start (the same request again: nothing changes, nothing is emitted). The same
 * status with another `start_time` (a postponed game's new tentative date, a scheduled game's
 * kick-off moved) moves the start: a change like any other, whose status is its previous status,
 * keeping the reason unless a new one is given. Throws 409 `invalid_transition` for a move the
 * table does not list and 400s for a start time that is missing, malformed, out of bounds around
 * `now` (checkStartTime; when `now` is given) or not taken with this status.
 */
export function planStatusChange(c: ScheduleState, req: StatusRequest, now?: number): StatusChange | null {
  if (req.start_time !== undefined && !TAKES_START_TIME.includes(req.status)) {
    throw invalid('invalid_field', `'start_time' is taken only when the status becomes scheduled or postponed.`, 'start_time');
  }
  const parsed = req.start_time === undefined ? undefined : Date.parse(req.start_time);
  if (parsed !== undefined && Number.isNaN(parsed)) throw invalid('invalid_field', "'start_time' must be an ISO 8601 date-time.", 'start_time');
  if (parsed !== undefined && now !== undefined) checkStartTime(parsed, now);
  if (c.status === req.status) {
    if (parsed === undefined || isoTime(parsed) === c.start_time) return null;
    return { ...moveStart(c, isoTime(parsed)), previous_status: c.status, status: c.status, status_reason: req.reason ?? c.status_reason ?? null };
  }
  if (!canMove(c.status, req.status)) {
    const allowed = TRANSITIONS[c.status];
    throw conflict(
      'invalid_transition',
      `A ${c.status} competition cannot become ${req.status}; ${allowed.length ? `it may become ${allowed.join(' or ')}` : 'its status is final'}.`,
      'status',
    );
  }
  if (c.status === 'postponed' && req.status === 'scheduled' && parsed === undefined) {
    throw invalid('missing_field', "A postponed competition is scheduled again with its new 'start_time'.", 'start_time');
  }
  return {
    ...moveStart(c, parsed === undefined ? c.start_time : isoTime(parsed)),
    previous_status: c.status,
    status: req.status,
    status_reason: req.reason ?? null,
  };
}

/** The start and day of `c` once its start is `start`: the first announced start is kept through every later move. */
function moveStart(c: ScheduleState, start: string | null): Pick<StatusChange, 'start_time' | 'original_start_time' | 'date'> {
  const moved = start !== c.start_time;
  return {
    start_time: start,
    original_start_time: moved ? (c.original_start_time ?? c.start_time) : c.original_start_time,
    date: start !== null && moved ? isoDate(Date.parse(start)) : c.date,
  };
}

/** Reports are refused for these: the game is not being played (docs/schedule.md). */
export const NOT_PLAYED: readonly string[] = ['postponed', 'cancelled'];
