/** Internal state of the engine: candidates (one per believed scoring play) grouped per game. */

/** The observed-time span of one reporter's reports absorbed by a candidate (its one vote). */
export interface Vote {
  first: number;
  last: number;
  /** The key a named reporter votes under (absent: a key's own voice). */
  keyId?: string;
}

export class Candidate {
  state: 'open' | 'confirmed' | 'retracted' = 'open';
  /** A provisional outcome was emitted, so a retraction or confirmation has something to name. */
  published = false;
  /** An official play matched it: a second official play of the same score is a second play. */
  official = false;
  /** Its game was forgotten: its pending deadline is void. */
  forgotten = false;
  /** Official data judged its voters (README rule 14): never twice. */
  judged = false;
  /** The probability its provisional went out with, for a retraction to carry (null: unpublished). */
  probability: number | null = null;
  readonly votes = new Map<string, Vote>();
  eventType: string | null;
  clock: string | null;

  constructor(
    readonly id: string,
    readonly key: string,
    readonly gameId: string,
    readonly team: string,
    readonly points: number,
    readonly firstObservedAt: number,
    readonly firstReceivedAt: number,
    eventType: string | null,
    clock: string | null,
    /** The reporter whose report started it; null for an official play's. */
    readonly starter: string | null,
  ) {
    this.eventType = eventType;
    this.clock = clock;
  }

  /** Later reports may carry the detail the first one lacked. */
  fill(eventType: string | undefined, clock: string | undefined): void {
    if (this.eventType === null && eventType !== undefined) this.eventType = eventType;
    if (this.clock === null && clock !== undefined) this.clock = clock;
  }
}

export const bucketKey = (team: string, points: number): string => `${team}\u0000${points}`;

/**
 * One game's candidates of one team and points, in creation order, with two numbers per
 * candidate in plain arrays beside them: its first-observed time and a bit per reporter that
 * voted for it (GameState.reporterBit; 32 bits shared by the game's reporters, so a set bit may be
 * another reporter's, a clear one proves no vote). A report reads these and touches a candidate
 * only when it may hold the reporter's vote or lies within the window: between two live reports
 * the caches are cold, so what a report touches sets its cost (README.md "Lookup").
 */
export class Bucket {
  readonly list: Candidate[] = [];
  /** `list[i].firstObservedAt`. */
  readonly observed: number[] = [];
  /** The reporter bits of `list[i]`'s voters. */
  readonly voterBits: number[] = [];

  /** Appends `c`; returns its index. */
  add(c: Candidate): number {
    this.list.push(c);
    this.observed.push(c.firstObservedAt);
    this.voterBits.push(0);
    return this.list.length - 1;
  }

  /** Records a reporter's vote for the candidate at index `i`. */
  vote(i: number, reporterId: string, bit: number, v: Vote): void {
    this.list[i].votes.set(reporterId, v);
    this.voterBits[i] |= bit;
  }

  /** Takes `c` out; true when the bucket is empty afterwards. */
  remove(c: Candidate): boolean {
    const i = this.list.indexOf(c);
    if (i >= 0) {
      this.list.splice(i, 1);
      this.observed.splice(i, 1);
      this.voterBits.splice(i, 1);
    }
    return this.list.length === 0;
  }
}

/** Candidates of one game, in buckets by team and points; plus who is active and who is present. */
export class GameState {
  readonly buckets = new Map<string, Bucket>();
  /** reporterId → receivedAt of its latest report on this game, while within activeWindowMs. */
  readonly active = new Map<string, number>();
  /** The same within presenceMs (a superset of `active`): voices whose silence is evidence. */
  readonly present = new Map<string, number>();
  /**
   * Each voice of `present` → the voter who last spoke for it and its key: a key's reporters
   * without a record share one voice (README rule 12), whose record is its latest reporter's.
   */
  readonly speakers = new Map<string, { voter: string; keyId: string }>();
  /** Open candidates, for the per-voice limit of unsupported ones (README rule 13). */
  readonly openSet = new Set<Candidate>();
  /** Open candidates with a quorum but not (yet) the agreement: tick() re-checks them. */
  readonly quorate = new Set<Candidate>();
  /** Something that moves agreement changed (a reporter went idle, track records moved). */
  dirty = false;
  open = 0;
  /** One entry per reporter of the game; it goes with the game. */
  private readonly bits = new Map<string, number>();

  /** The reporter's bit in this game's Bucket.voterBits: reporters in order of first use, round the 32 bits. */
  reporterBit(reporterId: string): number {
    let bit = this.bits.get(reporterId);
    if (bit === undefined) {
      bit = 1 << (this.bits.size & 31);
      this.bits.set(reporterId, bit);
    }
    return bit;
  }

  bucket(key: string): Bucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = new Bucket();
      this.buckets.set(key, b);
    }
    return b;
  }

  remove(c: Candidate): void {
    const b = this.buckets.get(c.key);
    if (b?.remove(c)) this.buckets.delete(c.key);
  }

  /** The earliest receipt among `active` (`present`): nothing can go idle (absent) before it is that old. */
  private oldestActive = Infinity;
  private oldestPresent = Infinity;

  touch(reporterId: string, receivedAt: number): void {
    const prev = this.active.get(reporterId);
    if (prev === undefined || receivedAt > prev) this.active.set(reporterId, receivedAt);
    if (prev === undefined && receivedAt < this.oldestActive) this.oldestActive = receivedAt;
    const was = this.present.get(reporterId);
    if (was === undefined || receivedAt > was) this.present.set(reporterId, receivedAt);
    if (was === undefined && receivedAt < this.oldestPresent) this.oldestPresent = receivedAt;
  }

  /** Drops reporters idle for more than activeWindowMs; scans only when one can be due. */
  sweepIdle(now: number, activeWindowMs: number): boolean {
    if (now - this.oldestActive <= activeWindowMs) return false;
    let dropped = false;
    let oldest = Infinity;
    for (const [id, last] of this.active) {
      if (now - last > activeWindowMs) {
        this.active.delete(id);
        dropped = true;
      } else if (last < oldest) oldest = last;
    }
    this.oldestActive = oldest;
    return dropped;
  }

  /** Drops voices absent for more than presenceMs. */
  sweepAbsent(now: number, presenceMs: number): boolean {
    if (now - this.oldestPresent <= presenceMs) return false;
    let dropped = false;
    let oldest = Infinity;
    for (const [id, last] of this.present) {
      if (now - last > presenceMs) {
        this.present.delete(id);
        this.speakers.delete(id);
        dropped = true;
      } else if (last < oldest) oldest = last;
    }
    this.oldestPresent = oldest;
    return dropped;
  }
}

/**
 * For an official play: the candidate in `list` whose first observation is nearest to
 * `observedAt` (within windowMs), not retracted and not yet matched by an official play; on a
 * tie the oldest, since `list` is in creation order.
 */
export function nearestForOfficial(list: readonly Candidate[], observedAt: number, windowMs: number): Candidate | undefined {
  // A play the crowd already confirmed wins over a nearer open candidate: official plays come
  // in order, so the open one is a stray (a reporter's second vote) that will be retracted,
  // while a second real play finds the first one already official and takes the open one.
  let best: Candidate | undefined;
  let bestGap = Infinity;
  for (const preferConfirmed of [true, false]) {
    for (const c of list) {
      const gap = Math.abs(observedAt - c.firstObservedAt);
      if (gap > windowMs || gap >= bestGap || c.state === 'retracted' || c.official) continue;
      if (preferConfirmed && c.state !== 'confirmed') continue;
      best = c;
      bestGap = gap;
    }
    if (best) return best;
  }
  return best;
}

export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
