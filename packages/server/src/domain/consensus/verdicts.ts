/**
 * Truth from official data (README.md rule 14): which crowd candidates of a game an official play,
 * or the game's final play, confirms or contradicts. Pure: the engine applies the verdicts to
 * the voters' track records, the store marks the candidates judged so none is judged twice.
 */

/** A candidate as the verdicts need it (held by the engine or read from the store). */
export interface JudgedCandidate {
  id: string;
  firstObservedAt: number;
  /** An official play matched it: the record holds it. */
  official: boolean;
  /** Its voters were judged already. */
  judged: boolean;
  votes: readonly { reporterId: string; keyId?: string; first: number }[];
}

export interface Verdicts {
  confirmed: JudgedCandidate[];
  contradicted: JudgedCandidate[];
}

/**
 * `play`: an official scoring play observed at `observedAt` that matched candidate `matched`
 * (null: it started a candidate of its own, which no crowd vote is in). Official plays come in
 * order, so a crowd candidate observed more than `windowMs` before it that no official play
 * matched is a score the record does not hold: contradicted. `final`: the game's record is
 * complete; every crowd candidate no official play matched is contradicted.
 */
export function officialVerdicts(candidates: readonly JudgedCandidate[], at: { play: { observedAt: number; matched: string | null } } | { final: true }, windowMs: number): Verdicts {
  const confirmed: JudgedCandidate[] = [];
  const contradicted: JudgedCandidate[] = [];
  for (const c of candidates) {
    if (c.judged || c.votes.length === 0) continue;
    if ('play' in at && c.id === at.play.matched) confirmed.push(c);
    else if (c.official) continue;
    else if ('final' in at || c.firstObservedAt < at.play.observedAt - windowMs) contradicted.push(c);
  }
  return { confirmed, contradicted };
}

/**
 * The voters a confirmation credits: every voter with a record of its own, and of each key's
 * reporters without one (its newcomer pool, one voice) only the one who voted first, so a swarm
 * earns a record one reporter per play, not one per identity (rule 12).
 */
export function creditedVoters(c: JudgedCandidate, pooled: (voter: string) => boolean): string[] {
  const out: string[] = [];
  const firstOfPool = new Map<string, { voter: string; first: number }>();
  for (const v of c.votes) {
    if (v.keyId === undefined || !pooled(v.reporterId)) {
      out.push(v.reporterId);
      continue;
    }
    const seen = firstOfPool.get(v.keyId);
    if (!seen || v.first < seen.first || (v.first === seen.first && v.reporterId < seen.voter)) firstOfPool.set(v.keyId, { voter: v.reporterId, first: v.first });
  }
  for (const { voter } of firstOfPool.values()) out.push(voter);
  return out;
}
