import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { Bucket, Candidate, GameState, bucketKey, nearestForOfficial, round3 } from './candidate.js';
import { Deadlines } from './deadlines.js';
import { resolveOptions, type ResolvedOptions } from './options.js';
import { probabilityOf, reportedBy, silenceEvidence, type Evidence } from './probability.js';
import type { CandidateChange, CandidateSnapshot, ConsensusOptions, EngineSize, GameSnapshot, OfficialIn, Outcome, RecordMove, ReportIn, SubmitResult, VerdictAt } from './types.js';
import { creditedVoters, officialVerdicts, type JudgedCandidate } from './verdicts.js';
import { NO_DELTA, ReporterWeights, addDelta, type RecordDelta } from './weights.js';

export type { CandidateChange, CandidateSnapshot, ConsensusOptions, Confidence, EngineSize, GameSnapshot, OfficialIn, Outcome, RecordMove, ReportIn, SubmitResult, VerdictAt } from './types.js';
export { ReporterWeights } from './weights.js';

/** Weighted sums are compared with a tolerance so 1.5 / 2.5 counts as 0.6 whatever the rounding. */
const EPSILON = 1e-9;
/** A key's reporters without a record speak as one voice: its id (README rule 12). */
const POOL = '\u0000pool:';
/** Between ghostEarlyMs and ghostMs, an unsupported provisional's silence is weighed this often. */
const GHOST_STEP_MS = 5_000;

function requireFinite(what: string, v: number): void {
  if (!Number.isFinite(v)) throw new RangeError(`${what} must be a finite number, got ${v}`);
}

/** A candidate's voters counted as voices (README rules 12 and 17). */
interface Tally {
  voices: number;
  /** Voices that count towards the quorum: not known liars (rule 15). */
  counted: number;
  /** Σ voice weights: the agreement's numerator. */
  weight: number;
  /** Σ logit(accuracy) of the voices: the probability's vote evidence. */
  evidence: number;
  /** The voice ids; null when every voter is its own voice (its id is the voter's). */
  ids: Set<string> | null;
  /** A voter that may publish a provisional alone. */
  lone: boolean;
  /** Distinct keys among the voices that vouch (weight ≥ minStartWeight, not on probation). */
  vouchingKeys: number;
  /** Voices not on probation: a candidate backed only by voters official data caught cannot be confirmed by the crowd (rule 15). */
  clean: number;
  /** Someone else backs it: voices of two keys, or two voices with records of their own (rule 18). */
  supported: boolean;
  /** Voices with a record of their own. */
  earned: number;
  /** Voices official data has confirmed a play of. */
  vetted: number;
  /** Scores official data contradicted, over the voices' records. */
  contradicted: number;
}

/** What the voices present on the game and silent on a candidate say (README rules 16 and 17). */
interface Presence {
  /** The candidate's weighted share of the present voices, the silent ones by their recall. */
  share: number;
  /** Σ log(1 − recall × F(t)) over the silent ones. */
  silence: number;
  /** Present voices outside the candidate, silent or rivals: when 0, nobody could have contradicted it (rule 17). */
  silent: number;
  /** Votes for other candidates of the same moment (another team or other points). */
  rivalVotes: number;
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
  /** When an unsupported provisional's silence is weighed (rule 18). */
  private readonly ghostChecks = new Deadlines<Candidate>();
  /** Unique per engine instance so ids from a restarted process never collide with old ones. */
  private readonly idPrefix = `cand_${randomBytes(4).toString('hex')}_`;
  private seq = 0;
  /** Candidates changed since the last takeChanges(), and those of them that closed meanwhile. */
  private readonly changed = new Set<Candidate>();
  private readonly closedSince = new Set<Candidate>();
  /** Track records moved since the last takeMoves(), per game and voter. */
  private readonly moves = new Map<string, Map<string, RecordMove>>();
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
    const keyId = r.keyId !== undefined && r.keyId !== r.reporterId ? r.keyId : undefined;
    const voice = this.voiceOf(r.reporterId, keyId);
    g.touch(voice, r.receivedAt);
    if (keyId !== undefined || g.speakers.size > 0) g.speakers.set(voice, { voter: r.reporterId, keyId: keyId ?? r.reporterId });
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
      // A voice inventing scores: past its few unsupported candidates, its reports start nothing (rule 13).
      if (this.unsupportedOf(g, voice) >= this.options.maxUnsupportedPerVoice) {
        // A bucket opened for this report alone would outlive everything else of the game.
        if (list.length === 0) g.buckets.delete(key);
        return { candidateId: null, duplicate: false, absorbed: true, flood: true, tier: 'provisional', outcomes };
      }
      c = this.create(g, bucket, key, r.gameId, r.team, r.points, r.observedAt, r.receivedAt, r.eventType ?? null, r.clock ?? null, r.reporterId);
      at = bucket.list.length - 1;
    }
    bucket.vote(at, r.reporterId, bit, keyId === undefined ? { first: r.observedAt, last: r.observedAt } : { first: r.observedAt, last: r.observedAt, keyId });
    c.fill(r.eventType, r.clock);
    this.mark(c);
    // A confirmed candidate takes late votes silently: no second event, no credit (they add no information).
    if (c.state === 'open') this.evaluate(c, g, now, outcomes);
    return { candidateId: c.id, duplicate: false, tier: c.state === 'confirmed' ? 'confirmed' : 'provisional', outcomes };
  }

  official(play: OfficialIn): Outcome[] {
    return this.officialPlay(play).outcomes;
  }

  /** An official scoring play: its outcomes and the candidate it matched or started (for `judge`). */
  officialPlay(play: OfficialIn): { outcomes: Outcome[]; candidateId: string } {
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
      return { outcomes: [], candidateId: match.id };
    }
    const c = match ?? this.create(g, bucket, key, play.gameId, play.team, play.points, play.observedAt, now, null, null, null);
    // The official source is authoritative for the details of its own play.
    c.eventType = play.eventType;
    if (play.clock !== undefined) c.clock = play.clock;
    this.mark(c);
    const outcomes: Outcome[] = [];
    this.confirm(c, g, 1, null, now, true, outcomes);
    return { outcomes, candidateId: c.id };
  }

  /**
   * Official data judges the crowd's votes of a game (rule 14): the voters of the candidate an
   * official play matched gain, those of candidates the record does not hold lose, the voices present
   * that did not report the play missed it. `stored`: the game's candidates not judged yet as the
   * store holds them (those this engine dropped from memory); a held candidate wins over its stored
   * copy. Answers the ids judged now, for the store to mark.
   */
  judge(at: VerdictAt, stored: readonly CandidateSnapshot[] = []): string[] {
    const gameId = 'play' in at ? at.play.gameId : at.gameId;
    const g = this.games.get(gameId);
    const held = new Map<string, Candidate>();
    if (g) for (const b of g.buckets.values()) for (const c of b.list) held.set(c.id, c);
    const list: JudgedCandidate[] = [];
    for (const c of held.values()) list.push(judgedOf(c));
    for (const s of stored) if (!held.has(s.id)) list.push(s);
    const verdicts = officialVerdicts(list, 'play' in at ? { play: at.play } : { final: true }, this.options.windowMs);
    const keyOf = (c: JudgedCandidate, voter: string) => c.votes.find((v) => v.reporterId === voter)?.keyId ?? voter;
    for (const c of verdicts.confirmed) {
      for (const voter of creditedVoters(c, (v) => !this.weights.earned(v))) this.move(gameId, voter, keyOf(c, voter), { officialConfirmed: 1 });
    }
    for (const c of verdicts.contradicted) for (const v of c.votes) this.move(gameId, v.reporterId, v.keyId ?? v.reporterId, { officialContradicted: 1 });
    if ('play' in at && g) {
      // Voices present when the play happened that did not report it: their recall falls.
      const matched = at.play.matched !== null ? held.get(at.play.matched) : undefined;
      const voted = new Set<string>();
      if (matched) for (const [voter, v] of matched.votes) voted.add(this.voiceOf(voter, v.keyId));
      const now = this.clock.now();
      for (const [voice, last] of g.present) {
        if (voted.has(voice) || now - last > this.options.presenceMs) continue;
        const who = g.speakers.get(voice);
        this.move(gameId, who?.voter ?? voice, who?.keyId ?? voice, { missed: 1 });
      }
    }
    const judged = [...verdicts.confirmed, ...verdicts.contradicted].map((c) => c.id);
    for (const id of judged) {
      const c = held.get(id);
      if (c) {
        c.judged = true;
        this.mark(c);
      }
    }
    if (g && judged.length > 0) g.dirty = true;
    return judged;
  }

  /** Due re-checks, ghost checks and retractions, then pruning. Call every second. */
  tick(): Outcome[] {
    const now = this.clock.now();
    const { retractAfterMs, windowMs, activeWindowMs, presenceMs } = this.options;
    const outcomes: Outcome[] = [];
    for (const [gameId, g] of this.games) {
      if (g.sweepIdle(now, activeWindowMs)) g.dirty = true;
      if (g.sweepAbsent(now, presenceMs)) g.dirty = true;
      // Agreement rises when others go idle or track records move, so quorate candidates are re-checked then.
      if (g.dirty) for (const c of g.quorate) this.evaluate(c, g, now, outcomes);
      g.dirty = false;
      if (g.buckets.size === 0 && g.present.size === 0) this.games.delete(gameId);
    }
    for (let c = this.ghostChecks.popDue(now); c; c = this.ghostChecks.popDue(now)) {
      if (c.forgotten || c.state !== 'open' || !c.published) continue;
      const g = this.games.get(c.gameId);
      if (g) this.ghostCheck(c, g, now, outcomes);
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
        if (g.buckets.size === 0 && g.present.size === 0) this.games.delete(c.gameId);
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

  /**
   * The voter is suspended (README.md "Suspended voters"): its votes leave every open candidate of `gameIds`
   * (default: every game held) and it stops counting among the game's active and present voices
   * (a key's newcomer pool too, when the voter is the one that last spoke for it). A candidate
   * left with no vote is retracted; the others that lost a vote, and every quorate candidate of
   * those games (their agreement no longer counts the voter), are judged again now. Closed
   * candidates keep their votes: what was decided stays decided. Returns the outcomes and, per
   * game, the candidates its votes left, for the caller to store.
   */
  withdrawVoter(voter: string, gameIds: Iterable<string> = this.games.keys()): { outcomes: Outcome[]; withdrawn: Map<string, string[]> } {
    const now = this.clock.now();
    const outcomes: Outcome[] = [];
    const withdrawn = new Map<string, string[]>();
    for (const gameId of [...gameIds]) {
      const g = this.games.get(gameId);
      if (!g) continue;
      for (const voice of [voter, ...[...g.speakers].filter(([, s]) => s.voter === voter).map(([v]) => v)]) {
        g.active.delete(voice);
        g.present.delete(voice);
        g.speakers.delete(voice);
      }
      const lost: Candidate[] = [];
      for (const bucket of g.buckets.values()) {
        for (const c of bucket.list) {
          // Its bit in voterBits stays: a set bit may be stale (Bucket), only a clear one is a proof.
          if (c.state !== 'open' || !c.votes.delete(voter)) continue;
          this.mark(c);
          lost.push(c);
        }
      }
      if (lost.length > 0) withdrawn.set(gameId, lost.map((c) => c.id));
      for (const c of lost) {
        if (c.votes.size === 0) this.retract(c, g, now, outcomes);
        else {
          // evaluate() puts it back while the voices left still make a quorum.
          g.quorate.delete(c);
          this.evaluate(c, g, now, outcomes);
        }
      }
      for (const c of [...g.quorate]) if (c.state === 'open') this.evaluate(c, g, now, outcomes);
    }
    return { outcomes, withdrawn };
  }

  /** From now on, record changed candidates and moved track records for takeChanges() and takeMoves(). */
  trackChanges(): void {
    this.tracking = true;
  }

  /**
   * Candidates changed since the last call (new votes, published, closed, judged), for the caller
   * to store; `closed` marks those confirmed or retracted in between.
   */
  takeChanges(): CandidateChange[] {
    const out: CandidateChange[] = [];
    for (const c of this.changed) out.push({ candidate: snapshotOf(c), closed: this.closedSince.has(c) });
    this.changed.clear();
    this.closedSince.clear();
    return out;
  }

  /** Track records moved since the last call (closed candidates, official verdicts), for the caller to store. */
  takeMoves(): RecordMove[] {
    const out: RecordMove[] = [];
    for (const perGame of this.moves.values()) out.push(...perGame.values());
    this.moves.clear();
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
   * the next tick, as track records may have moved meanwhile. Load the voters' records first:
   * a voice is known by its record (rule 12).
   */
  restoreGame(snapshot: GameSnapshot): void {
    this.dropGame(snapshot.gameId);
    const now = this.clock.now();
    const { retractAfterMs, windowMs, quorum } = this.options;
    const g = this.game(snapshot.gameId);
    for (const a of snapshot.active) {
      const keyId = a.keyId !== undefined && a.keyId !== a.reporterId ? a.keyId : undefined;
      const voice = this.voiceOf(a.reporterId, keyId);
      if (keyId !== undefined || g.speakers.size > 0) g.speakers.set(voice, { voter: a.reporterId, keyId: keyId ?? a.reporterId });
      g.touch(voice, a.receivedAt);
    }
    for (const s of snapshot.candidates) {
      const dropAt = s.firstReceivedAt + retractAfterMs + windowMs;
      if (s.state !== 'open' && dropAt <= now) continue;
      const key = bucketKey(s.team, s.points);
      const c = new Candidate(s.id, key, s.gameId, s.team, s.points, s.firstObservedAt, s.firstReceivedAt, s.eventType, s.clock, s.starter);
      c.state = s.state;
      c.published = s.published;
      c.official = s.official;
      c.judged = s.judged;
      c.probability = s.probability;
      const bucket = g.bucket(key);
      const at = bucket.add(c);
      for (const v of s.votes) {
        const keyId = v.keyId !== undefined && v.keyId !== v.reporterId ? v.keyId : undefined;
        bucket.vote(at, v.reporterId, g.reporterBit(v.reporterId), keyId === undefined ? { first: v.first, last: v.last } : { first: v.first, last: v.last, keyId });
      }
      if (s.state === 'open') {
        g.open += 1;
        g.openSet.add(c);
        if (c.votes.size >= quorum) g.quorate.add(c);
        this.deadlines.push(s.firstReceivedAt + retractAfterMs, c);
        if (c.published) this.scheduleGhostChecks(c);
      } else this.deadlines.push(dropAt, c);
    }
    g.dirty = g.quorate.size > 0;
  }

  /** Drops a game's state without outcomes: another node owns it now (its pending deadlines go void). */
  dropGame(gameId: string): void {
    const g = this.games.get(gameId);
    this.moves.delete(gameId);
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

  /** Moves a voter's record now, and notes the move for the caller that stores it. */
  private move(gameId: string, voter: string, keyId: string, d: Partial<RecordDelta>): void {
    const delta = addDelta(NO_DELTA, d);
    this.weights.apply(voter, delta);
    if (!this.tracking) return;
    let perGame = this.moves.get(gameId);
    if (!perGame) {
      perGame = new Map();
      this.moves.set(gameId, perGame);
    }
    const m = perGame.get(voter);
    if (m) m.delta = addDelta(m.delta, delta);
    else perGame.set(voter, { gameId, voter, keyId, delta });
  }

  private game(gameId: string): GameState {
    let g = this.games.get(gameId);
    if (!g) {
      g = new GameState();
      this.games.set(gameId, g);
    }
    return g;
  }

  /** The voice a voter speaks with: its own, unless it is a key's reporter without a record (rule 12). */
  private voiceOf(voter: string, keyId: string | undefined): string {
    if (keyId === undefined || keyId === voter || this.weights.earned(voter)) return voter;
    return POOL + keyId;
  }

  /** The voter whose record a voice carries (a pool's latest reporter). */
  private speakerOf(g: GameState, voice: string): string {
    return g.speakers.get(voice)?.voter ?? voice;
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
    g.openSet.add(c);
    this.deadlines.push(receivedAt + this.options.retractAfterMs, c);
    return c;
  }

  /** Open candidates of the game that nobody else supports and `voice` backs (rule 13). */
  private unsupportedOf(g: GameState, voice: string): number {
    let n = 0;
    for (const c of g.openSet) {
      if (c.votes.size === 1) {
        for (const [voter, v] of c.votes) if (this.voiceOf(voter, v.keyId) === voice) n += 1;
      } else {
        const t = this.tally(c);
        if (!t.supported && this.inTally(c, t, voice)) n += 1;
      }
    }
    return n;
  }

  /** The candidate's voters as voices: a key's reporters without a record are one (rule 12). */
  private tally(c: Candidate): Tally {
    const min = this.options.minStartWeight;
    const w = this.weights;
    let pooled = false;
    for (const [voter, v] of c.votes) {
      if (v.keyId !== undefined && !w.earned(voter)) {
        pooled = true;
        break;
      }
    }
    if (!pooled) {
      // Every voter is its own voice (the usual case: keys reporting in their own voice).
      let weight = 0;
      let evidence = 0;
      let lone = false;
      let vouching = 0;
      let clean = 0;
      let earnedVoices = 0;
      let vetted = 0;
      let liars = 0;
      let contradicted = 0;
      let ids: Set<string> | null = null;
      // Only named voters with records bring keys to count apart (a key's own voice is its key).
      let keys: Set<string> | null = null;
      let firstKey: string | undefined;
      let oneKey = true;
      for (const [voter, v] of c.votes) {
        const key = v.keyId ?? voter;
        if (firstKey === undefined) firstKey = key;
        else if (key !== firstKey) oneKey = false;
        const st = w.stats(voter);
        if (st.earned) earnedVoices += 1;
        if (st.vetted) vetted += 1;
        if (st.liar) liars += 1;
        contradicted += st.record.officialContradicted;
        weight += st.weight;
        evidence += st.accuracyLogit;
        if (!st.demoted) clean += 1;
        const vouches = st.weight >= min && !st.demoted;
        if (vouches) lone = true;
        if (v.keyId !== undefined) {
          ids ??= new Set(c.votes.keys());
          if (vouches) (keys ??= new Set()).add(v.keyId);
        } else if (vouches) vouching += 1;
      }
      return { voices: c.votes.size, counted: c.votes.size - liars, weight, evidence, ids, lone, vouchingKeys: vouching + (keys?.size ?? 0), clean, supported: !oneKey || earnedVoices >= 2, earned: earnedVoices, vetted, contradicted };
    }
    const voices = new Map<string, { weight: number; evidence: number; key: string; vouches: boolean; clean: boolean; honest: boolean }>();
    let lone = false;
    let contradicted = 0;
    const vettedVoices = new Set<string>();
    for (const [voter, v] of c.votes) {
      const voice = this.voiceOf(voter, v.keyId);
      const wt = w.weight(voter);
      contradicted += w.recordOf(voter).officialContradicted;
      if (w.vetted(voter)) vettedVoices.add(voice);
      const clean = !w.demoted(voter);
      const vouches = wt >= min && clean;
      // A pool member never publishes alone (rule 3); a voice of its own may.
      if (vouches && voice === voter) lone = true;
      const prev = voices.get(voice);
      const honest = !w.liar(voter);
      if (!prev) voices.set(voice, { weight: wt, evidence: w.accuracyLogit(voter), key: v.keyId ?? voter, vouches, clean, honest });
      else {
        prev.honest ||= honest;
        prev.weight = Math.max(prev.weight, wt);
        prev.evidence = Math.max(prev.evidence, w.accuracyLogit(voter));
        prev.vouches ||= vouches;
        prev.clean ||= clean;
      }
    }
    let weight = 0;
    let evidence = 0;
    let clean = 0;
    let earnedVoices = 0;
    let counted = 0;
    const keys = new Set<string>();
    const allKeys = new Set<string>();
    for (const [id, v] of voices) {
      if (v.honest) counted += 1;
      weight += v.weight;
      evidence += v.evidence;
      allKeys.add(v.key);
      if (v.vouches) keys.add(v.key);
      if (v.clean) clean += 1;
      if (!id.startsWith(POOL) && w.earned(id)) earnedVoices += 1;
    }
    return { voices: voices.size, counted, weight, evidence, ids: new Set(voices.keys()), lone, vouchingKeys: keys.size, clean, supported: allKeys.size >= 2 || earnedVoices >= 2, earned: earnedVoices, vetted: vettedVoices.size, contradicted };
  }

  private inTally(c: Candidate, t: Tally, voice: string): boolean {
    return t.ids ? t.ids.has(voice) : c.votes.has(voice);
  }

  /** Publishes once a voter may publish alone, or vouching voices of two keys back it (rules 3 and 8). */
  private publishable(t: Tally): boolean {
    return t.lone || t.vouchingKeys >= 2;
  }

  /** Confirms a candidate that meets quorum, agreement and presence, else publishes it once it may be (rules 3, 4, 16). */
  private evaluate(c: Candidate, g: GameState, now: number, out: Outcome[]): void {
    const t = this.tally(c);
    if (t.counted < this.options.quorum) {
      if (!c.published && this.publishable(t)) this.publish(c, g, t, now, out);
      return;
    }
    const agreement = this.agreement(c, g, now, t);
    if (agreement >= this.options.agreement - EPSILON && t.clean > 0) {
      const presence = this.presence(c, g, now, t);
      if (presence.share >= this.options.presenceAgreement - EPSILON) {
        this.confirm(c, g, agreement, this.evidenceOf(t, presence, true), now, false, out, t);
        return;
      }
    }
    g.quorate.add(c);
    if (!c.published && this.publishable(t)) this.publish(c, g, t, now, out);
  }

  /** Weighted share of the game's active voices (the candidate's own voices always count). */
  private agreement(c: Candidate, g: GameState, now: number, t: Tally): number {
    const own = t.weight;
    let others = 0;
    for (const [voice, last] of g.active) {
      if (now - last <= this.options.activeWindowMs && !this.inTally(c, t, voice)) others += this.weights.stats(this.speakerOf(g, voice)).weight;
    }
    return own + others > 0 ? own / (own + others) : 0;
  }

  /** The silence of the voices present on the game that did not vote for `c` (rules 16, 17, 18). */
  private presence(c: Candidate, g: GameState, now: number, t: Tally): Presence {
    const reported = reportedBy(now - c.firstReceivedAt);
    // Voices that reported the same moment for another team or other points said otherwise: they
    // count at their full weight, where mere silence counts by the chance they would have reported.
    // A voice that reported both this candidate and another near it reported two plays (a
    // high-scoring game scores several times a window), not a different version of this one; nor
    // does a vote observed before this play (beyond the duplicate window's slack) contradict it.
    const since = c.firstObservedAt - this.options.duplicateWindowMs;
    let rivalVotes = 0;
    let rivals: Set<string> | null = null;
    for (const [key, b] of g.buckets) {
      if (key === c.key) continue;
      for (let i = 0; i < b.list.length; i++) {
        const x = b.list[i];
        if (Math.abs(b.observed[i] - c.firstObservedAt) > this.options.windowMs || x.state === 'retracted') continue;
        for (const [voter, v] of x.votes) {
          if (v.last < since) continue;
          const voice = this.voiceOf(voter, v.keyId);
          if (this.inTally(c, t, voice)) continue;
          rivalVotes += 1;
          rivals ??= new Set();
          rivals.add(voice);
        }
      }
    }
    let silentWeight = 0;
    let silence = 0;
    let silent = 0;
    for (const [voice, last] of g.present) {
      if (now - last > this.options.presenceMs || this.inTally(c, t, voice)) continue;
      const { recall, weight } = this.weights.stats(this.speakerOf(g, voice));
      silentWeight += weight * (rivals?.has(voice) ? 1 : recall);
      silence += silenceEvidence(recall, reported);
      silent += 1;
    }
    const share = t.weight + silentWeight > 0 ? t.weight / (t.weight + silentWeight) : 0;
    return { share, silence, silent, rivalVotes };
  }

  /** What the probability weighs (probability.ts). */
  private evidenceOf(t: Tally, p: Presence, confirm: boolean): Evidence {
    return {
      votes: t.evidence / t.voices,
      silence: p.silence,
      contested: 1 - p.share,
      newcomers: t.vetted === 0 ? 1 : 0,
      conflict: Math.log1p(p.rivalVotes),
      confirm: confirm ? 1 : 0,
      voices: Math.log(t.voices),
      liars: Math.log1p(t.contradicted),
      alone: p.silent === 0 ? 1 : 0,
    };
  }

  private publish(c: Candidate, g: GameState, t: Tally, now: number, out: Outcome[]): void {
    c.published = true;
    this.mark(c);
    const evidence = this.evidenceOf(t, this.presence(c, g, now, t), false);
    const probability = probabilityOf(evidence, this.options.calibration);
    c.probability = probability;
    const { id: candidateId, gameId, team, points } = c;
    const confidence = { agreement: round3(this.agreement(c, g, now, t)), reporters: t.voices, latency_ms: Math.max(0, now - c.firstReceivedAt), probability };
    out.push({ kind: 'provisional', candidateId, gameId, team, points, eventType: c.eventType ?? 'score', clock: c.clock, at: now, confidence, evidence });
    if (!t.supported) this.scheduleGhostChecks(c);
  }

  /** An unsupported provisional's silence is weighed from ghostEarlyMs to ghostMs after its first receipt (rule 18). */
  private scheduleGhostChecks(c: Candidate): void {
    const { ghostEarlyMs, ghostMs } = this.options;
    for (let d = Math.min(ghostEarlyMs, ghostMs); d < ghostMs; d += GHOST_STEP_MS) this.ghostChecks.push(c.firstReceivedAt + d, c);
    this.ghostChecks.push(c.firstReceivedAt + ghostMs, c);
  }

  /** Retracts an unsupported provisional that the game's other present voices have let pass in silence (rule 18). */
  private ghostCheck(c: Candidate, g: GameState, now: number, out: Outcome[]): void {
    const t = this.tally(c);
    if (t.supported) return;
    const { ghostMs, ghostEarlyMs, ghostSilence } = this.options;
    const age = now - c.firstReceivedAt;
    const p = this.presence(c, g, now, t);
    if ((age >= ghostMs && p.silent >= 2) || (age >= ghostEarlyMs && p.silent > 0 && Math.exp(p.silence) <= ghostSilence)) this.retract(c, g, now, out);
  }

  /** `evidence`: the crowd's (its probability is computed from it); null for an official play (probability 1). */
  private confirm(c: Candidate, g: GameState, agreement: number, evidence: Evidence | null, now: number, official: boolean, out: Outcome[], t?: Tally): void {
    // A crowd confirmation always follows a provisional (the confirmed event names it); an official one need not.
    if (!official && !c.published) this.publish(c, g, t ?? this.tally(c), now, out);
    this.close(c, g, 'confirmed');
    c.official = official;
    const { id: candidateId, gameId, team, points } = c;
    const reporters = official ? c.votes.size : (t ?? this.tally(c)).voices;
    const probability = evidence ? probabilityOf(evidence, this.options.calibration) : 1;
    const confidence = { agreement: round3(agreement), reporters, latency_ms: Math.max(0, now - c.firstReceivedAt), probability };
    const base = { kind: 'confirmed' as const, candidateId, gameId, team, points, eventType: c.eventType ?? 'score', clock: c.clock, at: now, confidence, official, hadProvisional: c.published };
    out.push(evidence ? { ...base, evidence } : base);
  }

  private retract(c: Candidate, g: GameState, now: number, out: Outcome[]): void {
    this.close(c, g, 'retracted');
    // Nothing was published for an unpublished candidate, so there is nothing to take back.
    if (c.published) out.push({ kind: 'retracted', candidateId: c.id, gameId: c.gameId, team: c.team, points: c.points, at: now, probability: c.probability ?? 0 });
  }

  /**
   * Settles a candidate and moves its voters' track records: confirmed, each voice that backed it
   * agreed (a key's newcomer pool through its first reporter only, rule 12); retracted, every
   * voter disagreed.
   */
  private close(c: Candidate, g: GameState, state: 'confirmed' | 'retracted'): void {
    c.state = state;
    g.open -= 1;
    g.openSet.delete(c);
    this.mark(c);
    if (this.tracking) this.closedSince.add(c);
    g.quorate.delete(c);
    g.dirty = true;
    if (state === 'retracted') {
      for (const [voter, v] of c.votes) this.move(c.gameId, voter, v.keyId ?? voter, { disagreed: 1 });
      return;
    }
    const judged = judgedOf(c);
    for (const voter of creditedVoters(judged, (v) => !this.weights.earned(v))) {
      this.move(c.gameId, voter, c.votes.get(voter)?.keyId ?? voter, { agreed: 1 });
    }
  }
}

function judgedOf(c: Candidate): JudgedCandidate {
  return {
    id: c.id,
    firstObservedAt: c.firstObservedAt,
    official: c.official,
    judged: c.judged,
    votes: [...c.votes].map(([reporterId, v]) => (v.keyId !== undefined ? { reporterId, keyId: v.keyId, first: v.first } : { reporterId, first: v.first })),
  };
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
    judged: c.judged,
    probability: c.probability,
    votes: [...c.votes].map(([reporterId, v]) => (v.keyId !== undefined ? { reporterId, keyId: v.keyId, first: v.first, last: v.last } : { reporterId, first: v.first, last: v.last })),
  };
}
