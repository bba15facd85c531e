import { randomBytes } from 'node:crypto';
import type { Clock } from '@svc/server';
import { Bucket, Candidate, GameState, bucketKey, nearestForOfficial, round3 } from './candidate.js';
import { Deadlines } from './deadlines.js';
import { resolveOptions, type ResolvedOptions } from './options.js';
import type { CandidateChange, CandidateSnapshot, ConsensusOptions, EngineSize, GameSnapshot, OfficialIn, Outcome, ReportIn, SubmitResult } from './types.js';
import { ReporterWeights } from './weights.js';

export type { CandidateChange, CandidateSnapshot, ConsensusOptions, Confidence, EngineSize, GameSnapshot, OfficialIn, Outcome, ReportIn, SubmitResult } from './types.js';
export { ReporterWeights } from './weights.js';

/** Weighted sums are compared with a tolerance so 1.5 / 2.5 counts as 0.6 whatever the rounding. */
const EPSILON = 1e-9;

function requireFinite(what: string, v: number): void {
  if (!Number.isFinite(v)) throw new RangeError(`${what} must be a finite number, got ${v}`);
}

/**
 * Crowd reports and official plays in, provisional / confirmed / retracted outcomes out
 * (`docs/consensus.md`; the rules are listed in README.md beside this file). Synchronous and
 * single-threaded: the caller serialises calls. Every time rule reads the injected Clock.
 */
export class ConsensusEngine {
  readonly options: ResolvedOptions;
  private readonly games = new Map<string, GameState>();
  /** Each candidate's next deadline: its retraction while open, then its removal. */
  private readonly deadlines = new Deadlines<Candidate>();
  /** Unique per engine instance so ids from a restarted process never collide with old ones. */
  private readonly idPrefix = `cand_${randomBytes(4).toString('hex')}_`;
  private seq = 0;
  /** Candidates changed since the last takeChanges(), and those of them that closed meanwhile. */
  private readonly changed = new Set<Candidate>();
  private readonly closedSince = new Set<Candidate>();
  private tracking = false;

  constructor(
    private readonly clock: Clock,
    options: Partial<ConsensusOptions> = {},
    readonly weights: ReporterWeights = new ReporterWeights(),
  ) {
    this.options = resolveOptions(options);
  }

  submit(r: ReportIn): SubmitResult {
    requireFinite('points', r.points);
    requireFinite('observedAt', r.observedAt);
    requireFinite('receivedAt', r.receivedAt);
    const now = this.clock.now();
    const g = this.game(r.gameId);
    g.touch(r.reporterId, r.receivedAt);
    const key = bucketKey(r.team, r.points);
    const bucket = g.bucket(key);

    // One pass over the bucket's arrays: a repeat of one of its votes wins over joining; otherwise
    // the nearest candidate (tie: the oldest) that is not retracted and lacks this reporter's vote.
    const { duplicateWindowMs: dw, windowMs } = this.options;
    const bit = g.reporterBit(r.reporterId);
    const { list, observed, voterBits } = bucket;
    let c: Candidate | undefined;
    let at = -1;
    let bestGap = Infinity;
    let startedOpen = 0;
    for (let i = 0; i < list.length; i++) {
      if ((voterBits[i] & bit) !== 0) {
        const x = list[i];
        const v = x.votes.get(r.reporterId);
        if (v) {
          if (r.observedAt >= v.first - dw && r.observedAt <= v.last + dw) {
            // A reporter repeating itself counts once; the span grows so a steady stream of repeats stays one vote.
            v.first = Math.min(v.first, r.observedAt);
            v.last = Math.max(v.last, r.observedAt);
            this.mark(x);
            return { candidateId: null, duplicate: true, repeatOf: x.id, tier: x.state === 'confirmed' ? 'confirmed' : 'provisional', outcomes: [] };
          }
          if (x.starter === r.reporterId && x.state === 'open') startedOpen += 1;
          continue;
        }
      }
      const gap = Math.abs(r.observedAt - observed[i]);
      if (gap <= windowMs && gap < bestGap && list[i].state !== 'retracted') {
        c = list[i];
        at = i;
        bestGap = gap;
      }
    }

    const outcomes: Outcome[] = [];
    if (!c) {
      // Spreading observed times apart would let one reporter open candidates (and provisional
      // events) without end, each making every later report of the bucket read more.
      if (startedOpen >= this.options.maxOpenStartedPerReporter) return { candidateId: null, duplicate: false, absorbed: true, tier: 'provisional', outcomes };
      c = this.create(g, bucket, key, r.gameId, r.team, r.points, r.observedAt, r.receivedAt, r.eventType ?? null, r.clock ?? null, r.reporterId);
      at = bucket.list.length - 1;
    }
    bucket.vote(at, r.reporterId, bit, { first: r.observedAt, last: r.observedAt });
    c.fill(r.eventType, r.clock);
    this.mark(c);
    // A confirmed candidate takes late votes silently: no second event, no credit (they add no information).
    if (c.state === 'open') this.evaluate(c, g, now, outcomes);
    return { candidateId: c.id, duplicate: false, tier: c.state === 'confirmed' ? 'confirmed' : 'provisional', outcomes };
  }

  official(play: OfficialIn): Outcome[] {
    requireFinite('points', play.points);
    requireFinite('observedAt', play.observedAt);
    const now = this.clock.now();
    const g = this.game(play.gameId);
    const key = bucketKey(play.team, play.points);
    const bucket = g.bucket(key);
    const match = nearestForOfficial(bucket.list, play.observedAt, this.options.windowMs);
    if (match && match.state === 'confirmed') {
      // The crowd was first: the official play is the same play, not a new event.
      match.official = true;
      this.mark(match);
      return [];
    }
    const c = match ?? this.create(g, bucket, key, play.gameId, play.team, play.points, play.observedAt, now, null, null, null);
    // The official source is authoritative for the details of its own play.
    c.eventType = play.eventType;
    if (play.clock !== undefined) c.clock = play.clock;
    this.mark(c);
    const outcomes: Outcome[] = [];
    this.confirm(c, g, 1, now, true, outcomes);
    return outcomes;
  }

  /** Due re-checks and retractions, then pruning. Call every second. */
  tick(): Outcome[] {
    const now = this.clock.now();
    const { retractAfterMs, windowMs, activeWindowMs } = this.options;
    const outcomes: Outcome[] = [];
    for (const [gameId, g] of this.games) {
      if (g.sweepIdle(now, activeWindowMs)) g.dirty = true;
      // Agreement rises when others go idle or track records move, so quorate candidates are re-checked then.
      if (g.dirty) for (const c of g.quorate) this.evaluate(c, g, now, outcomes);
      g.dirty = false;
      if (g.buckets.size === 0 && g.active.size === 0) this.games.delete(gameId);
    }
    for (let c = this.deadlines.popDue(now); c; c = this.deadlines.popDue(now)) {
      if (c.forgotten) continue;
      const g = this.game(c.gameId);
      if (c.state === 'open') this.retract(c, g, now, outcomes);
      // Closed candidates stay long enough to absorb late and repeated reports of their play.
      const dropAt = c.firstReceivedAt + retractAfterMs + windowMs;
      if (dropAt > now) this.deadlines.push(dropAt, c);
      else {
        g.remove(c);
        if (g.buckets.size === 0 && g.active.size === 0) this.games.delete(c.gameId);
      }
    }
    return outcomes;
  }

  openCandidates(gameId?: string): number {
    if (gameId !== undefined) return this.games.get(gameId)?.open ?? 0;
    let n = 0;
    for (const g of this.games.values()) n += g.open;
    return n;
  }

  /**
   * The game is final: official plays settled it, so candidates still open are retracted now
   * (a published provisional must not stay unresolved) and the game's state goes.
   */
  forgetGame(gameId: string): Outcome[] {
    const g = this.games.get(gameId);
    if (!g) return [];
    const now = this.clock.now();
    const outcomes: Outcome[] = [];
    for (const bucket of g.buckets.values()) {
      for (const c of [...bucket.list]) {
        if (c.state === 'open') this.retract(c, g, now, outcomes);
        c.forgotten = true;
      }
    }
    this.games.delete(gameId);
    return outcomes;
  }

  /** From now on, record changed candidates for takeChanges() (a caller that stores the state). */
  trackChanges(): void {
    this.tracking = true;
  }

  /**
   * Candidates changed since the last call (new votes, published, closed), for the caller to
   * store; `closed` marks those confirmed or retracted in between (their voters' track records moved).
   */
  takeChanges(): CandidateChange[] {
    const out: CandidateChange[] = [];
    for (const c of this.changed) out.push({ candidate: snapshotOf(c), closed: this.closedSince.has(c) });
    this.changed.clear();
    this.closedSince.clear();
    return out;
  }

  /** Games this engine holds state for. */
  gameIds(): string[] {
    return [...this.games.keys()];
  }

  /**
   * Takes a game over from a stored snapshot (after a restart or from another node): replaces
   * whatever this engine held for it. Open candidates keep their retraction deadline (from their
   * first receipt, so one already due is retracted by the next tick); closed ones stay to absorb
   * late reports until they would have been dropped. Quorate open candidates are re-checked by
   * the next tick, as track records may have moved meanwhile.
   */
  restoreGame(snapshot: GameSnapshot): void {
    this.dropGame(snapshot.gameId);
    const now = this.clock.now();
    const { retractAfterMs, windowMs, quorum } = this.options;
    const g = this.game(snapshot.gameId);
    for (const a of snapshot.active) g.touch(a.reporterId, a.receivedAt);
    for (const s of snapshot.candidates) {
      const dropAt = s.firstReceivedAt + retractAfterMs + windowMs;
      if (s.state !== 'open' && dropAt <= now) continue;
      const key = bucketKey(s.team, s.points);
      const c = new Candidate(s.id, key, s.gameId, s.team, s.points, s.firstObservedAt, s.firstReceivedAt, s.eventType, s.clock, s.starter);
      c.state = s.state;
      c.published = s.published;
      c.official = s.official;
      const bucket = g.bucket(key);
      const at = bucket.add(c);
      for (const v of s.votes) bucket.vote(at, v.reporterId, g.reporterBit(v.reporterId), { first: v.first, last: v.last });
      if (s.state === 'open') {
        g.open += 1;
        if (c.votes.size >= quorum) g.quorate.add(c);
        this.deadlines.push(s.firstReceivedAt + retractAfterMs, c);
      } else this.deadlines.push(dropAt, c);
    }
    g.dirty = g.quorate.size > 0;
  }

  /** Drops a game's state without outcomes: another node owns it now (its pending deadlines go void). */
  dropGame(gameId: string): void {
    const g = this.games.get(gameId);
    if (!g) return;
    for (const bucket of g.buckets.values()) {
      for (const c of bucket.list) {
        c.forgotten = true;
        this.changed.delete(c);
        this.closedSince.delete(c);
      }
    }
    this.games.delete(gameId);
  }

  size(): EngineSize {
    let candidates = 0;
    let activeReporters = 0;
    for (const g of this.games.values()) {
      for (const bucket of g.buckets.values()) candidates += bucket.list.length;
      activeReporters += g.active.size;
    }
    return { games: this.games.size, candidates, activeReporters };
  }

  /** Only a caller that stores the state asks for changes; the others must not pay for them in memory. */
  private mark(c: Candidate): void {
    if (this.tracking) this.changed.add(c);
  }

  private game(gameId: string): GameState {
    let g = this.games.get(gameId);
    if (!g) {
      g = new GameState();
      this.games.set(gameId, g);
    }
    return g;
  }

  private create(
    g: GameState,
    bucket: Bucket,
    key: string,
    gameId: string,
    team: string,
    points: number,
    observedAt: number,
    receivedAt: number,
    eventType: string | null,
    clock: string | null,
    starter: string | null,
  ): Candidate {
    this.seq += 1;
    const c = new Candidate(this.idPrefix + this.seq.toString(36), key, gameId, team, points, observedAt, receivedAt, eventType, clock, starter);
    bucket.add(c);
    g.open += 1;
    this.deadlines.push(receivedAt + this.options.retractAfterMs, c);
    return c;
  }

  /** Confirms a candidate that meets quorum and agreement, else publishes it once a trusted voter backs it. */
  private evaluate(c: Candidate, g: GameState, now: number, out: Outcome[]): void {
    if (c.votes.size < this.options.quorum) {
      if (!c.published && this.hasTrustedVoter(c)) this.publish(c, this.agreement(c, g, now), now, out);
      return;
    }
    const agreement = this.agreement(c, g, now);
    if (agreement >= this.options.agreement - EPSILON) {
      this.confirm(c, g, agreement, now, false, out);
      return;
    }
    g.quorate.add(c);
    if (!c.published && this.hasTrustedVoter(c)) this.publish(c, agreement, now, out);
  }

  /** Weighted share of the game's active reporters (the candidate's own voters always count). */
  private agreement(c: Candidate, g: GameState, now: number): number {
    let own = 0;
    for (const id of c.votes.keys()) own += this.weights.weight(id);
    let others = 0;
    for (const [id, last] of g.active) {
      if (now - last <= this.options.activeWindowMs && !c.votes.has(id)) others += this.weights.weight(id);
    }
    return own + others > 0 ? own / (own + others) : 0;
  }

  private hasTrustedVoter(c: Candidate): boolean {
    for (const id of c.votes.keys()) if (this.weights.weight(id) >= this.options.minStartWeight) return true;
    return false;
  }

  private publish(c: Candidate, agreement: number, now: number, out: Outcome[]): void {
    c.published = true;
    this.mark(c);
    const { id: candidateId, gameId, team, points } = c;
    const confidence = { agreement: round3(agreement), reporters: c.votes.size, latency_ms: Math.max(0, now - c.firstReceivedAt) };
    out.push({ kind: 'provisional', candidateId, gameId, team, points, eventType: c.eventType ?? 'score', clock: c.clock, at: now, confidence });
  }

  private confirm(c: Candidate, g: GameState, agreement: number, now: number, official: boolean, out: Outcome[]): void {
    // A crowd confirmation always follows a provisional (the confirmed event names it); an official one need not.
    if (!official && !c.published) this.publish(c, agreement, now, out);
    this.close(c, g, 'confirmed');
    c.official = official;
    const { id: candidateId, gameId, team, points } = c;
    const confidence = { agreement: round3(agreement), reporters: c.votes.size, latency_ms: Math.max(0, now - c.firstReceivedAt) };
    out.push({ kind: 'confirmed', candidateId, gameId, team, points, eventType: c.eventType ?? 'score', clock: c.clock, at: now, confidence, official, hadProvisional: c.published });
  }

  private retract(c: Candidate, g: GameState, now: number, out: Outcome[]): void {
    this.close(c, g, 'retracted');
    // Nothing was published for an unpublished candidate, so there is nothing to take back.
    if (c.published) out.push({ kind: 'retracted', candidateId: c.id, gameId: c.gameId, team: c.team, points: c.points, at: now });
  }

  /** Settles a candidate and moves its voters' track records (confirmed: agreed; retracted: disagreed). */
  private close(c: Candidate, g: GameState, state: 'confirmed' | 'retracted'): void {
    c.state = state;
    g.open -= 1;
    this.mark(c);
    if (this.tracking) this.closedSince.add(c);
    g.quorate.delete(c);
    g.dirty = true;
    for (const id of c.votes.keys()) this.weights.record(id, state === 'confirmed');
  }
}

function snapshotOf(c: Candidate): CandidateSnapshot {
  return {
    id: c.id,
    gameId: c.gameId,
    team: c.team,
    points: c.points,
    firstObservedAt: c.firstObservedAt,
    firstReceivedAt: c.firstReceivedAt,
    eventType: c.eventType,
    clock: c.clock,
    starter: c.starter,
    state: c.state,
    published: c.published,
    official: c.official,
    votes: [...c.votes].map(([reporterId, v]) => ({ reporterId, first: v.first, last: v.last })),
  };
}
