/**
 * The flag rule (README.md "Flags", docs/reporters.md "The flag rule"): which voters an operator
 * should look at. A flag changes nothing by itself; an operator suspends.
 */

/** What the rule reads of a voter: its track record's counts and its stored reports. */
export interface FlagInput {
  agreed: number;
  disagreed: number;
  officialConfirmed: number;
  officialContradicted: number;
  /** Plays an official source recorded on a game it was reporting on that it did not report (0 where not counted). */
  missed: number;
  /** Reports stored from it, counted or not. */
  reports: number;
}

export type FlagReason = 'official_contradictions' | 'repeated_retractions' | 'flooding';

/** Contradictions by official data that flag a voter whatever else it got right… */
export const CONTRADICTIONS_FLAG = 3;
/** …and the share of its officially judged plays that flags it from the first contradiction on. */
export const CONTRADICTED_SHARE_FLAG = 0.2;
/** Retracted votes that flag a voter once they also outnumber its confirmed ones. */
export const RETRACTIONS_FLAG = 3;
/** Reports per play of its games above which a voter floods… */
export const FLOOD_RATIO = 10;
/** …once it has sent at least this many (a few repeats of a goal are not a flood). */
export const FLOOD_MIN_REPORTS = 30;

/** The parts of the rule that mark this voter; empty: not flagged. */
export function flagReasons(r: FlagInput): FlagReason[] {
  const out: FlagReason[] = [];
  const judged = r.officialConfirmed + r.officialContradicted;
  if (r.officialContradicted >= CONTRADICTIONS_FLAG || (r.officialContradicted > 0 && r.officialContradicted >= CONTRADICTED_SHARE_FLAG * judged)) out.push('official_contradictions');
  if (r.disagreed >= RETRACTIONS_FLAG && r.disagreed > r.agreed) out.push('repeated_retractions');
  // The plays there were to report on its games: those its votes were judged on, and those it missed.
  const plays = r.agreed + r.disagreed + r.missed;
  if (r.reports >= FLOOD_MIN_REPORTS && r.reports > FLOOD_RATIO * Math.max(1, plays)) out.push('flooding');
  return out;
}

export const flagged = (r: FlagInput): boolean => flagReasons(r).length > 0;
