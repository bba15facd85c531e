import type { ReportInput, ReportResult } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import type { ConsensusEngine } from '../domain/consensus/engine.js';
import type { Outcome } from '../domain/consensus/types.js';
import { SvcError } from '../domain/errors.js';
import { STORE_FAULT_MESSAGES, storeFault } from '../store/sql/faults.js';
import { randomBase62 } from '../domain/keys.js';
import type { Principal } from '../domain/scopes.js';
import type { ConsensusStore } from '../store/consensus/store.js';
import type { StoredEvent } from '../store/events/events.js';
import { LeaseLost, type GameLeases } from '../store/consensus/leases.js';
import { StaleTrackRecord, type ReporterStore } from '../store/consensus/reporters.js';
import type { ConsensusWriter, PlayLink, TakenReport, TakenReports, WithdrawnVotes } from './consensus-writer.js';
import type { GameDirectory, GameInfo } from './games.js';
import { checkReport } from './report-checks.js';
import type { SuspendedVoters } from './suspended.js';
import { errorReply, replyError, RouteFailed, type OfficialPlay, type OwnerReply, type OwnerRequest, type OwnerRouter } from './router.js';
import { engineVoter, speakerOf } from './voters.js';

/**
 * A promise chain: the engine runs one call at a time so it and the store agree on order. A call
 * does not start when its caller has given up waiting (`signal`: it was answered 503 at its
 * deadline, http/deadline.ts) or while the database is known not to answer (each would spend
 * the store's bounds again, one after another, and the queue behind it with them): it fails at
 * once instead, so a stalled database costs the queue one timeout, not one per waiting call.
 */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly store: StoreWatch) {}
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const turn = async () => {
      signal?.throwIfAborted();
      if (this.store.down()) throw storeUnavailable();
      try {
        return await fn();
      } catch (err) {
        // Told before the next call's turn: it then fails at once instead of trying the store too.
        if (storeFault(err) === 'store_unavailable') this.store.fault();
        throw err;
      }
    };
    const next = this.tail.then(turn, turn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

const storeUnavailable = () => new SvcError('store_unavailable', STORE_FAULT_MESSAGES.store_unavailable);

/** What the ingest knows of the database's health (health/store-health.ts): whether it is known away, and how to say a call found it so. */
export interface StoreWatch {
  down(): boolean;
  fault(): void;
}

const ALWAYS_UP: StoreWatch = { down: () => false, fault: () => undefined };

const NO_PRIOR_REPORTS: ReadonlyMap<string, ReportResult> = new Map();

/** How often a routed request is decided again when the reporter's track record moved meanwhile. */
const STALE_RECORD_ATTEMPTS = 3;

/** How long one request to a game's owner may take before the sender asks again. */
const ROUTE_TIMEOUT_MS = 1000;

/**
 * Crowd reports and official plays in, consensus decisions out. Three jobs: validation against
 * the game (report-checks.ts); routing, so that each game's ConsensusEngine runs on the one node
 * holding its lease (forwarding there otherwise, router.ts); and driving that engine, with its
 * state of a game rebuilt from the store whenever this node (re)takes the game. What the engine
 * decides is made durable and published by the ConsensusWriter (docs/consensus.md, "Cluster").
 */
export class LiveIngest {
  private readonly serial: Serial;
  /** gameId → the lease token under which this engine's state of the game was built. */
  private readonly loaded = new Map<string, number>();
  /**
   * Voters whose records a failed write moved in the engine but not in the store: read again
   * before their next decision. The write's record check compares a stored row only, so a voter
   * with none yet would otherwise be weighed on moves that were never stored.
   */
  private readonly unstored = new Set<string>();

  constructor(
    private readonly games: GameDirectory,
    private readonly state: ConsensusStore,
    private readonly reporters: ReporterStore,
    private readonly writer: ConsensusWriter,
    private readonly engine: ConsensusEngine,
    private readonly clock: Clock,
    private readonly leases: GameLeases,
    /** Voters whose reports start and join nothing (docs/reporters.md). */
    private readonly suspended: SuspendedVoters,
    private readonly router: OwnerRouter | null,
    private readonly onWrite: () => void = () => undefined,
    /** How long a report may wait for its game's owner; by default a dead owner's lease has lapsed by then. */
    private readonly routeWaitMs = leases.ttlMs + 5 * ROUTE_TIMEOUT_MS,
    /** Whether the database is known not to answer (health/store-health.ts): then nothing queues for it. */
    private readonly store: StoreWatch = ALWAYS_UP,
  ) {
    this.serial = new Serial(store);
    engine.trackChanges();
    router?.serve((req) => this.handle(req));
  }

  /**
   * Validates every report first: one bad report rejects the batch and nothing is stored. `signal`
   * aborts when the caller stopped waiting (answered 503 at its deadline): what has not started
   * by then does not.
   */
  async submit(p: Principal, reports: ReportInput[], batched: boolean, signal?: AbortSignal): Promise<ReportResult[]> {
    // Known away: answered at once, rather than after the store's bounds.
    if (this.store.down()) throw storeUnavailable();
    const resolved: GameInfo[] = [];
    for (const [i, r] of reports.entries()) {
      const game = await this.games.byGameId(r.game_id);
      checkReport(p, r, game, this.clock.now(), (field) => (batched ? `reports[${i}].${field}` : field));
      resolved.push(game);
    }
    // A ref repeated within the batch answers like its first use; each game's reports go to its owner.
    const results: (ReportResult | undefined)[] = new Array(reports.length);
    const firstOfRef = new Map<string, number>();
    const sameAs = new Map<number, number>();
    const byGame = new Map<string, number[]>();
    reports.forEach((r, i) => {
      const first = r.ref !== undefined ? firstOfRef.get(r.ref) : undefined;
      if (first !== undefined) {
        sameAs.set(i, first);
        return;
      }
      if (r.ref !== undefined) firstOfRef.set(r.ref, i);
      const list = byGame.get(r.game_id) ?? [];
      list.push(i);
      byGame.set(r.game_id, list);
    });
    for (const [gameId, idx] of byGame) {
      const part = idx.map((i) => reports[i]);
      const out = await this.onOwner(gameId, () => this.processOwned(p.keyId, gameId, part), { kind: 'reports', gameId, reporterId: p.keyId, reports: part }, signal);
      idx.forEach((i, k) => (results[i] = out[k]));
    }
    for (const [i, first] of sameAs) results[i] = results[first];
    await this.markLive(resolved);
    return results.map((r, i) => {
      if (!r) throw new Error(`report ${i} got no result`);
      return r;
    });
  }

  /**
   * A sandbox replay's crowd (docs/replays.md): reports the service makes itself for a replay's
   * own game, so without a caller's checks; they reach the game's consensus owner like any report.
   */
  async replayReports(reporterId: string, gameId: string, reports: ReportInput[]): Promise<ReportResult[]> {
    return this.onOwner(gameId, () => this.processOwned(reporterId, gameId, reports), { kind: 'reports', gameId, reporterId, reports });
  }

  /** Official scoring play: confirms at once, on the game's owner. */
  async official(game: GameInfo, play: OfficialPlay, signal?: AbortSignal): Promise<void> {
    await this.onOwner(game.gameId, () => this.officialOwned(game.gameId, play), { kind: 'official', gameId: game.gameId, play }, signal);
  }

  /**
   * The game is over: open candidates are retracted so no provisional stays unresolved. `final`:
   * it ended by its final play, whose record judges every crowd vote of the game first.
   */
  async forgetGame(gameId: string, final = false, signal?: AbortSignal): Promise<void> {
    await this.onOwner(gameId, () => this.forgetOwned(gameId, final), { kind: 'forget', gameId, final }, signal);
  }

  /**
   * A voter was suspended (docs/reporters.md): from now on its reports start and join nothing on
   * this node, and its votes leave the open candidates of `gameIds`, each on the game's owner (who
   * learns of the suspension with the request), their candidates judged again without them.
   */
  async withdrawVoter(voter: string, gameIds: readonly string[], signal?: AbortSignal): Promise<void> {
    this.suspended.add(voter);
    // Games' owners work side by side; on one node the engine's queue takes them in turn.
    await Promise.all(gameIds.map((gameId) => this.onOwner(gameId, () => this.withdrawOwned(gameId, voter), { kind: 'withdraw', gameId, voter }, signal)));
  }

  /** The voter's suspension was lifted: its next reports count again here (other nodes read it within a second). */
  restoreVoter(voter: string): void {
    this.suspended.delete(voter);
  }

  /**
   * Every second (worker.ts): extends this node's leases and drops games taken over by others,
   * takes over games with open candidates that no live node owns, then runs the engine's due
   * retractions and re-checks, and gives up games it no longer holds state for.
   */
  async tick(): Promise<StoredEvent[]> {
    for (const gameId of await this.leases.renew()) await this.serial.run(async () => this.drop(gameId));
    for (const gameId of await this.leases.orphans()) {
      const claim = await this.leases.claim(gameId);
      if (claim.owned) await this.serial.run(() => this.ensureLoaded(gameId));
    }
    // Suspensions made on other nodes: their voters' votes leave the games held here.
    for (const voter of await this.suspended.refresh()) await this.serial.run(() => this.withdrawHeld(voter, this.engine.gameIds()));
    const stored = await this.serial.run(() => this.persist(this.engine.tick(), []));
    const live = new Set(this.engine.gameIds());
    const idle = this.leases.heldGames().filter((g) => !live.has(g));
    if (idle.length) {
      await this.serial.run(async () => {
        // Re-checked inside the queue: a report may have opened state for one meanwhile.
        const busy = new Set(this.engine.gameIds());
        const released = idle.filter((g) => !busy.has(g));
        for (const g of released) this.loaded.delete(g);
        await this.leases.release(released);
      });
    }
    return stored;
  }

  /** Shutting down: hand this node's games over now instead of after the lease TTL. */
  async close(): Promise<void> {
    await this.router?.close();
    await this.serial.run(() => this.leases.release(this.leases.heldGames()));
  }

  /** Runs `local` when this node owns the game, else sends `req` to the owner; retries across a handover. */
  private async onOwner(gameId: string, local: () => Promise<ReportResult[]>, req: OwnerRequest, signal?: AbortSignal): Promise<ReportResult[]> {
    // Measured on the clock the leases lapse on: waiting is for a dead owner's lease to lapse.
    const deadline = this.clock.now() + this.routeWaitMs;
    // Whether the last request to the owner failed for want of Redis rather than of an owner.
    let busAway = false;
    for (let attempt = 0; ; attempt++) {
      // The caller was answered meanwhile (its deadline), or the database went away: no more tries.
      signal?.throwIfAborted();
      if (this.store.down()) throw storeUnavailable();
      const claim = await this.leases.claim(gameId);
      if (claim.owned) {
        try {
          return await this.serial.run(local, signal);
        } catch (err) {
          // Taken over while this node wrote: ask again, now of the new owner; past the deadline a
          // retryable 503 like any other wait for an owner, never the internal LeaseLost. A track
          // record moved meanwhile: decide again, the game rebuilt from the store.
          if (!(err instanceof LeaseLost || err instanceof StaleTrackRecord)) throw err;
          if (this.clock.now() <= deadline) continue;
        }
      } else if (this.router) {
        const reply = await this.router.send(claim.owner, req, ROUTE_TIMEOUT_MS).catch((err: unknown) => {
          if (!(err instanceof RouteFailed)) throw err;
          busAway = err.busAway;
          return null;
        });
        // The owner holds its lease and is alive as far as anyone knows; only Redis could carry
        // the call, and waiting for it would hold the reporter for the whole route deadline.
        if (busAway) throw new SvcError('bus_unavailable', `The node that holds ${gameId} cannot be reached while Redis is away; retry shortly.`);
        if (reply?.ok) return reply.results;
        if (reply && !reply.notOwner) throw replyError(reply);
        // No answer, or not the owner any more: the next claim reads the lease again.
        this.leases.forgetOwner(gameId);
      }
      // The owner is dead or just lost the game: its lease lapses within the TTL, then a claim wins.
      if (this.clock.now() > deadline) {
        throw new SvcError('consensus_unavailable', `No node took the consensus of ${gameId} over in time; retry shortly.`);
      }
      await this.clock.sleep(Math.min(50 * 2 ** Math.min(attempt, 4), 500));
    }
  }

  /** A request from another node for a game this node owns (else `notOwner`, and the sender asks again). */
  private async handle(req: OwnerRequest): Promise<OwnerReply> {
    for (let attempt = 1; ; attempt++) {
      // The sender read this node's name on the lease: take the game back if it was dropped after a failed write.
      if (!(await this.leases.claim(req.gameId)).owned) return { ok: false, notOwner: true };
      try {
        if (req.kind === 'reports') return { ok: true, results: await this.serial.run(() => this.processOwned(req.reporterId, req.gameId, req.reports)) };
        if (req.kind === 'official') await this.serial.run(() => this.officialOwned(req.gameId, req.play));
        else if (req.kind === 'withdraw') await this.serial.run(() => this.withdrawOwned(req.gameId, req.voter));
        else await this.serial.run(() => this.forgetOwned(req.gameId, req.final ?? false));
        return { ok: true, results: [] };
      } catch (err) {
        // A track record moved on another node: decided again here, a few times at most.
        if (err instanceof StaleTrackRecord && attempt < STALE_RECORD_ATTEMPTS) continue;
        if (err instanceof LeaseLost || err instanceof StaleTrackRecord) return { ok: false, notOwner: true };
        return errorReply(err);
      }
    }
  }

  /** Inside the queue: the engine's state of the game matches the lease this node holds (rebuilt from the store when new). */
  private async ensureLoaded(gameId: string): Promise<void> {
    const token = this.leases.token(gameId);
    if (token === undefined) throw new LeaseLost(gameId);
    if (this.loaded.get(gameId) === token) return;
    this.engine.dropGame(gameId);
    await this.suspended.ready();
    const stored = await this.state.loadGame(gameId, this.clock.now(), this.engine.options);
    // A suspended voter's reports count nowhere, not even among the game's present voices.
    stored.snapshot.active = stored.snapshot.active.filter((a) => !this.suspended.has(a.reporterId));
    const voters = new Set(stored.snapshot.active.map((a) => a.reporterId));
    for (const c of stored.snapshot.candidates) for (const v of c.votes) voters.add(v.reporterId);
    // Every voter's record, newcomers' included: a voice is known by its record (domain rule 12).
    await this.loadRecords([...voters], true);
    this.writer.restore(stored);
    this.engine.restoreGame(stored.snapshot);
    this.loaded.set(gameId, token);
  }

  /** After a failed write the engine's state of the game may be ahead of the store: drop it, rebuild on next use. */
  private drop(gameId: string): void {
    this.engine.dropGame(gameId);
    this.engine.takeChanges();
    this.engine.takeMoves();
    this.loaded.delete(gameId);
    this.leases.forget(gameId);
  }

  /** Reads the stored records of these voters into the engine (`all`: also those it holds already). */
  private async loadRecords(voters: readonly string[], all = false): Promise<void> {
    const wanted = all ? voters : voters.filter((v) => !this.engine.weights.has(v) || this.unstored.has(v));
    if (wanted.length === 0) return;
    const stored = await this.reporters.records(wanted);
    for (const v of wanted) {
      this.engine.weights.load(v, stored.get(v) ?? {});
      this.unstored.delete(v);
    }
  }

  private async processOwned(keyId: string, gameId: string, reports: ReportInput[]): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    const speakers = reports.map((r) => speakerOf(keyId, r));
    // Stored and answered like any report, but it starts and joins nothing (docs/reporters.md).
    const silenced = speakers.map((sp) => this.suspended.has(sp.voter));
    const voters = [...new Set(speakers.filter((_, i) => !silenced[i]).map((sp) => sp.voter))];
    await this.loadRecords(voters);
    // In a cluster a voter's record also moves on the nodes owning the other games it votes in:
    // the write checks, as it moves their rows, that the records weighed are still the stored ones
    // (ReporterStore.write).
    const weighed = this.router !== null ? new Map(voters.map((v) => [v, this.engine.weights.recordOf(v)])) : undefined;
    const now = this.clock.now();
    const results: ReportResult[] = [];
    const outcomes: Outcome[] = [];
    const taken: TakenReport[] = [];
    const refs = reports.flatMap((r) => (r.ref !== undefined ? [r.ref] : []));
    const known = refs.length > 0 ? await this.state.priorReports(keyId, refs) : NO_PRIOR_REPORTS;
    reports.forEach((r, i) => {
      const replay = r.ref !== undefined ? known.get(r.ref) : undefined;
      if (replay) {
        results.push(replay);
        return;
      }
      const observedAt = r.observed_at !== undefined ? Math.min(Date.parse(r.observed_at), now) : now;
      if (silenced[i]) {
        const result: ReportResult = { id: `rpt_${randomBase62(20)}`, event_id: null, tier: 'provisional' };
        taken.push({ result, input: r, speaker: speakers[i], voted: null, candidate: null, observedAt });
        results.push(result);
        return;
      }
      const out = this.engine.submit({
        ...engineVoter(speakers[i]),
        gameId,
        team: r.team,
        points: r.points,
        eventType: r.event_type,
        clock: r.clock,
        observedAt,
        receivedAt: now,
      });
      outcomes.push(...out.outcomes);
      const result: ReportResult = { id: `rpt_${randomBase62(20)}`, event_id: null, tier: out.tier };
      taken.push({ result, input: r, speaker: speakers[i], voted: out.candidateId, candidate: out.candidateId ?? out.repeatOf ?? null, observedAt });
      results.push(result);
    });
    try {
      await this.persist(outcomes, [{ gameId, keyId, receivedAt: now, reports: taken, weighed }]);
    } catch (err) {
      // The game was dropped with the refused write; it is decided again on the stored record.
      if (err instanceof StaleTrackRecord) await this.loadRecords([err.reporterId], true);
      throw err;
    }
    return results;
  }

  /**
   * An official scoring play: confirms its play, then judges the game's crowd votes against it
   * (domain rule 14), the candidates the engine no longer holds from the store's copy.
   */
  private async officialOwned(gameId: string, play: OfficialPlay): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    const stored = await this.state.unjudged(gameId);
    await this.loadRecords(stored.flatMap((c) => c.votes.map((v) => v.reporterId)));
    const res = this.engine.officialPlay({ gameId, ...play });
    const judged = this.engine.judge({ play: { gameId, observedAt: play.observedAt, matched: res.candidateId } }, stored);
    // The candidate the play settled (a new one, or the crowd's it matched): its event is the play's (docs/corrections.md).
    const links: PlayLink[] = play.seq !== undefined ? [{ gameId, candidateId: res.candidateId, seq: play.seq }] : [];
    await this.persist(res.outcomes, [], { judged: [{ gameId, ids: judged }], links });
    return [];
  }

  /** On the game's owner: the suspended voter's votes leave the game's open candidates, stored with what that decided. */
  private async withdrawOwned(gameId: string, voter: string): Promise<ReportResult[]> {
    this.suspended.add(voter);
    await this.ensureLoaded(gameId);
    await this.withdrawHeld(voter, [gameId]);
    return [];
  }

  /** Inside the queue: withdraws the voter's votes from these games held here and stores the outcome. */
  private async withdrawHeld(voter: string, gameIds: readonly string[]): Promise<void> {
    const { outcomes, withdrawn } = this.engine.withdrawVoter(voter, gameIds);
    const votes: WithdrawnVotes[] = [...withdrawn].map(([gameId, candidateIds]) => ({ gameId, voter, candidateIds }));
    await this.persist(outcomes, [], { withdrawn: votes });
  }

  private async forgetOwned(gameId: string, final: boolean): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    const judged: { gameId: string; ids: string[] }[] = [];
    if (final) {
      const stored = await this.state.unjudged(gameId);
      await this.loadRecords(stored.flatMap((c) => c.votes.map((v) => v.reporterId)));
      judged.push({ gameId, ids: this.engine.judge({ final: true, gameId }, stored) });
    }
    await this.persist(this.engine.forgetGame(gameId), [], { judged });
    this.loaded.delete(gameId);
    await this.leases.release([gameId]);
    return [];
  }

  /**
   * Hands the engine's outcomes, changes and record moves to the writer, with the candidates
   * official data judged, the plays' links and a suspension's withdrawn votes; a game whose write
   * failed is dropped (rebuilt on next use).
   */
  private persist(
    outcomes: Outcome[],
    taken: TakenReports[],
    more: { judged?: { gameId: string; ids: string[] }[]; links?: PlayLink[]; withdrawn?: WithdrawnVotes[] } = {},
  ): Promise<StoredEvent[]> {
    const trust = { moves: this.engine.takeMoves(), judged: more.judged ?? [] };
    return this.writer.write(outcomes, this.engine.takeChanges(), trust, taken, (gameId) => this.drop(gameId), more.links, more.withdrawn).catch((err: unknown) => {
      for (const m of trust.moves) this.unstored.add(m.voter);
      throw err;
    });
  }

  private async markLive(games: GameInfo[]): Promise<void> {
    const scheduled = games.filter((g) => g.status === 'scheduled');
    const ids = [...new Set(scheduled.map((g) => g.competitionId))];
    if (ids.length === 0) return;
    await this.games.markLive(ids);
    this.onWrite();
    // Only those that were scheduled: a suspended game stays suspended (docs/schedule.md).
    for (const g of scheduled) {
      g.status = 'live';
      this.games.setStatus(g.gameId, 'live');
    }
  }
}
