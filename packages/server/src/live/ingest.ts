import { SvcError } from '../domain/errors.js';
import type { ReportInput, ReportResult } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoDate, isoTime, type Clock } from '../domain/clock.js';
import type { ConsensusEngine } from '../domain/consensus/engine.js';
import type { CandidateChange, Outcome } from '../domain/consensus/types.js';
import { conflict, invalid } from '../domain/errors.js';
import { randomBase62 } from '../domain/keys.js';
import { requireScope, visibleTo, type Principal } from '../domain/scopes.js';
import type { Db } from '../store/db.js';
import type { EventLog, NewEvent, StoredEvent } from '../store/events.js';
import type { ReportTable } from '../store/types.js';
import { ConsensusStore, insertReports, reportsByRef } from '../store/consensus.js';
import type { GameDirectory, GameInfo } from './games.js';
import { LeaseLost, type GameLeases } from '../store/leases.js';
import { errorReply, replyError, RouteFailed, type OfficialPlay, type OwnerReply, type OwnerRequest, type OwnerRouter } from './router.js';
import { pointsAllowed } from './sport-rules.js';

/** A promise chain: the engine runs one call at a time so it and the store agree on order. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * How far a report's `observed_at` may be from the arrival: a moment of today's game (games run
 * for hours, not days) seen by a device whose clock may run a little ahead. Outside it the report
 * is refused: a time in 2000 or 2099 is a broken client, not an observation. Inside it, a time
 * ahead of the service's clock counts as the arrival (README "Reports").
 */
export const OBSERVED_AT_WINDOW = { pastMs: 6 * 3_600_000, futureMs: 5 * 60_000 } as const;


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a report may wait for its game's owner: a dead owner's lease lapses within the TTL. */
const ROUTE_TIMEOUT_MS = 1000;

/**
 * Crowd reports in, events out: validates against the game, runs the ConsensusEngine of the node
 * that owns the game (forwarding to it when that is another node), and stores the resulting
 * events with the reports, the candidates' state and track records in one fenced transaction
 * (docs/consensus.md, "Cluster"), then publishes the events on the bus.
 */
export class LiveIngest {
  private readonly serial = new Serial();
  /** consensus candidate → its provisional event id, so the confirmation can name it. */
  private readonly provisionalOf = new Map<string, string>();
  private readonly confirmedOf = new Map<string, string>();
  /** gameId → the lease token under which this engine's state of the game was built. */
  private readonly loaded = new Map<string, number>();
  private readonly state: ConsensusStore;

  constructor(
    private readonly db: Db,
    private readonly games: GameDirectory,
    private readonly log: EventLog,
    private readonly bus: EventBus,
    private readonly engine: ConsensusEngine,
    private readonly clock: Clock,
    private readonly leases: GameLeases,
    private readonly router: OwnerRouter | null,
    private readonly onWrite: () => void = () => undefined,
    /** How long a report may wait for its game's owner; by default a dead owner's lease has lapsed by then. */
    private readonly routeWaitMs = leases.ttlMs + 5 * ROUTE_TIMEOUT_MS,
  ) {
    this.state = new ConsensusStore(db);
    engine.trackChanges();
    router?.serve((req) => this.handle(req));
  }

  /** Validates every report first: one bad report rejects the batch and nothing is stored. */
  async submit(p: Principal, reports: ReportInput[], batched: boolean): Promise<ReportResult[]> {
    const today = isoDate(this.clock.now());
    const resolved: GameInfo[] = [];
    for (const [i, r] of reports.entries()) {
      const at = (field: string) => (batched ? `reports[${i}].${field}` : field);
      const game = await this.games.byGameId(r.game_id);
      // Another key's sandbox replay does not exist for this key (docs/replays.md).
      if (!game || !visibleTo(game.ownerKeyId, p.keyId)) throw invalid('unknown_game', `No game '${r.game_id}'.`, at('game_id'));
      requireScope(p, game.sport, game.league, at('game_id'));
      if (game.status === 'final') throw conflict('game_final', `Game '${r.game_id}' is final; it takes no more reports.`, at('game_id'));
      if (game.date !== today && game.status !== 'live') {
        throw conflict('game_not_live', `Game '${r.game_id}' is on ${game.date}; reports are taken on game day.`, at('game_id'));
      }
      if (!game.teams.has(r.team)) throw invalid('team_not_in_game', `Team '${r.team}' does not play in ${r.game_id}.`, at('team'));
      if (!pointsAllowed(game.sport, r.points)) {
        throw invalid('invalid_points', `${r.points} points cannot be scored at once in ${game.sport}.`, at('points'));
      }
      if (r.observed_at !== undefined) {
        const observed = Date.parse(r.observed_at);
        if (Number.isNaN(observed)) throw invalid('invalid_field', "'observed_at' must be an ISO 8601 date-time.", at('observed_at'));
        const now = this.clock.now();
        if (observed < now - OBSERVED_AT_WINDOW.pastMs || observed > now + OBSERVED_AT_WINDOW.futureMs) {
          throw invalid('invalid_field', "'observed_at' must be within the last 6 hours and at most 5 minutes ahead of the service's clock.", at('observed_at'));
        }
      }
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
      const out = await this.onOwner(gameId, () => this.processOwned(p.keyId, gameId, part), { kind: 'reports', gameId, reporterId: p.keyId, reports: part });
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
  async official(game: GameInfo, play: OfficialPlay): Promise<void> {
    await this.onOwner(game.gameId, () => this.officialOwned(game.gameId, play), { kind: 'official', gameId: game.gameId, play });
  }

  /** The game is final: open candidates are retracted so no provisional stays unresolved. */
  async forgetGame(gameId: string): Promise<void> {
    await this.onOwner(gameId, () => this.forgetOwned(gameId), { kind: 'forget', gameId });
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
  private async onOwner(gameId: string, local: () => Promise<ReportResult[]>, req: OwnerRequest): Promise<ReportResult[]> {
    const deadline = Date.now() + this.routeWaitMs;
    // Whether the last request to the owner failed for want of Redis rather than of an owner.
    let busAway = false;
    for (let attempt = 0; ; attempt++) {
      const claim = await this.leases.claim(gameId);
      if (claim.owned) {
        try {
          return await this.serial.run(local);
        } catch (err) {
          if (!(err instanceof LeaseLost) || Date.now() > deadline) throw err;
          continue;
        }
      }
      if (this.router) {
        const reply = await this.router.send(claim.owner, req, ROUTE_TIMEOUT_MS).catch((err: unknown) => {
          if (!(err instanceof RouteFailed)) throw err;
          busAway = err.busAway;
          return null;
        });
        if (reply?.ok) return reply.results;
        if (reply && !reply.notOwner) throw replyError(reply);
      }
      // The owner is dead or just lost the game: its lease lapses within the TTL, then a claim wins.
      // Retryable: the owner's lease lapses within the lease time and another node takes the game.
      if (Date.now() > deadline) {
        if (busAway) throw new SvcError('bus_unavailable', `The node that holds ${gameId} cannot be reached while Redis is away; retry shortly.`);
        throw new SvcError('consensus_unavailable', `No node took the consensus of ${gameId} over in time; retry shortly.`);
      }
      await sleep(Math.min(50 * 2 ** Math.min(attempt, 4), 500));
    }
  }

  /** A request from another node for a game this node owns (else `notOwner`, and the sender asks again). */
  private async handle(req: OwnerRequest): Promise<OwnerReply> {
    // The sender read this node's name on the lease: take the game back if it was dropped after a failed write.
    if (!(await this.leases.claim(req.gameId)).owned) return { ok: false, notOwner: true };
    try {
      if (req.kind === 'reports') return { ok: true, results: await this.serial.run(() => this.processOwned(req.reporterId, req.gameId, req.reports)) };
      if (req.kind === 'official') await this.serial.run(() => this.officialOwned(req.gameId, req.play));
      else await this.serial.run(() => this.forgetOwned(req.gameId));
      return { ok: true, results: [] };
    } catch (err) {
      if (err instanceof LeaseLost) return { ok: false, notOwner: true };
      return errorReply(err);
    }
  }

  /** Inside the queue: the engine's state of the game matches the lease this node holds (rebuilt from the store when new). */
  private async ensureLoaded(gameId: string): Promise<void> {
    const token = this.leases.token(gameId);
    if (token === undefined) throw new LeaseLost(gameId);
    if (this.loaded.get(gameId) === token) return;
    this.engine.dropGame(gameId);
    const stored = await this.state.loadGame(gameId, this.clock.now(), this.engine.options);
    const reporters = new Set(stored.snapshot.active.map((a) => a.reporterId));
    for (const c of stored.snapshot.candidates) for (const v of c.votes) reporters.add(v.reporterId);
    for (const [id, r] of await this.state.records([...reporters])) this.engine.weights.load(id, r);
    for (const [c, e] of stored.provisionalOf) this.provisionalOf.set(c, e);
    for (const [c, e] of stored.confirmedOf) this.confirmedOf.set(c, e);
    this.engine.restoreGame(stored.snapshot);
    this.loaded.set(gameId, token);
  }

  /** After a failed write the engine's state of the game may be ahead of the store: drop it, rebuild on next use. */
  private drop(gameId: string): void {
    this.engine.dropGame(gameId);
    this.engine.takeChanges();
    this.loaded.delete(gameId);
    this.leases.forget(gameId);
  }

  private async processOwned(reporterId: string, gameId: string, reports: ReportInput[]): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    // In a cluster, track records move on every node owning a game the reporter votes in: take the
    // stored one. A single node writes them all itself, so its memory is current once loaded.
    if (this.router !== null || !this.engine.weights.has(reporterId)) {
      const stored = await this.state.records([reporterId]);
      this.engine.weights.load(reporterId, stored.get(reporterId) ?? { agreed: 0, disagreed: 0 });
    }
    const now = this.clock.now();
    const results: ReportResult[] = [];
    const outcomes: Outcome[] = [];
    // `voted`: the candidate the report voted for; `candidate` (stored) also names the one a repeat repeated.
    const rows: { result: ReportResult; report: ReportInput; voted: string | null; candidate: string | null; observedAt: number }[] = [];
    const refs = reports.map((r) => r.ref).filter((r): r is string => r !== undefined);
    const known = new Map<string, ReportResult>();
    if (refs.length) {
      const prior = await reportsByRef(this.db, reporterId, refs).execute();
      for (const r of prior) if (r.ref) known.set(r.ref, { id: r.id, event_id: r.event_id, tier: r.tier === 'confirmed' ? 'confirmed' : 'provisional' });
    }
    for (const r of reports) {
      const replay = r.ref !== undefined ? known.get(r.ref) : undefined;
      if (replay) {
        results.push(replay);
        continue;
      }
      const observedAt = r.observed_at !== undefined ? Math.min(Date.parse(r.observed_at), now) : now;
      const out = this.engine.submit({
        reporterId,
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
      rows.push({ result, report: r, voted: out.candidateId, candidate: out.candidateId ?? out.repeatOf ?? null, observedAt });
      results.push(result);
    }
    const reportRows = (): ReportTable[] =>
      rows.map((row) => {
        // Each report points at its candidate's newest event: the confirmation once there is one.
        const res = row.result;
        if (row.voted) {
          const confirmed = this.confirmedOf.get(row.voted);
          res.event_id = confirmed ?? this.provisionalOf.get(row.voted) ?? null;
          res.tier = confirmed ? 'confirmed' : 'provisional';
        }
        return {
          id: res.id,
          key_id: reporterId,
          ref: row.report.ref ?? null,
          game_id: gameId,
          team: row.report.team,
          points: row.report.points,
          event_type: row.report.event_type ?? null,
          clock: row.report.clock ?? null,
          observed_at: isoTime(row.observedAt),
          received_at: isoTime(now),
          event_id: res.event_id,
          tier: res.tier,
          candidate_id: row.candidate,
        };
      });
    await this.persist(outcomes, [{ gameId, rows: reportRows }]);
    return results;
  }

  private async officialOwned(gameId: string, play: OfficialPlay): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    await this.persist(this.engine.official({ gameId, ...play }), []);
    return [];
  }

  private async forgetOwned(gameId: string): Promise<ReportResult[]> {
    await this.ensureLoaded(gameId);
    await this.persist(this.engine.forgetGame(gameId), []);
    this.loaded.delete(gameId);
    await this.leases.release([gameId]);
    return [];
  }

  /**
   * Stores the engine's outcomes as events, with the changed candidates, moved track records and
   * the given reports, one fenced transaction per game; then publishes. A game whose write fails
   * is dropped from the engine (rebuilt from the store on next use) and the error rethrown.
   */
  private async persist(outcomes: Outcome[], reports: { gameId: string; rows: () => ReportTable[] }[]): Promise<StoredEvent[]> {
    const changes = this.engine.takeChanges();
    const perGame = new Map<string, { outcomes: Outcome[]; changes: CandidateChange[]; rows: (() => ReportTable[])[] }>();
    const of = (g: string) => {
      let e = perGame.get(g);
      if (!e) {
        e = { outcomes: [], changes: [], rows: [] };
        perGame.set(g, e);
      }
      return e;
    };
    for (const o of outcomes) of(o.gameId).outcomes.push(o);
    for (const c of changes) of(c.candidate.gameId).changes.push(c);
    for (const r of reports) of(r.gameId).rows.push(r.rows);
    const all: StoredEvent[] = [];
    let failure: unknown = null;
    for (const [gameId, work] of perGame) {
      try {
        all.push(...(await this.persistGame(gameId, work.outcomes, work.changes, work.rows)));
      } catch (err) {
        this.drop(gameId);
        failure ??= err;
      }
    }
    this.trimMaps();
    if (all.length) await this.bus.publish(all);
    if (failure) throw failure;
    return all;
  }

  private async persistGame(gameId: string, outcomes: Outcome[], changes: CandidateChange[], reportRows: (() => ReportTable[])[]): Promise<StoredEvent[]> {
    const game = await this.games.byGameId(gameId);
    if (!game) throw new Error(`consensus outcome for unknown game ${gameId}`);
    const rows: NewEvent[] = outcomes.map((o) => this.eventRow(game, o));
    // A provisional and its confirmation can come out of one call: link them inside the append.
    const indexOfProvisional = new Map<string, number>();
    outcomes.forEach((o, i) => {
      if (o.kind === 'provisional') indexOfProvisional.set(o.candidateId, i);
      else if (o.kind === 'confirmed' && rows[i].provisional_id === null) rows[i].provisionalIndex = indexOfProvisional.get(o.candidateId);
    });
    return this.log.append(rows, {
      before: (tx) => this.leases.fence(tx, gameId),
      within: async (tx, stored) => {
        stored.forEach((s, i) => {
          const o = outcomes[i];
          if (o.kind === 'provisional') this.provisionalOf.set(o.candidateId, s.event.id);
          if (o.kind === 'confirmed') this.confirmedOf.set(o.candidateId, s.event.id);
        });
        await this.state.write(tx, changes, (id) => ({ provisional: this.provisionalOf.get(id) ?? null, confirmed: this.confirmedOf.get(id) ?? null }));
        await insertReports(tx, reportRows.flatMap((f) => f()));
      },
    });
  }

  private eventRow(game: GameInfo, o: Outcome): NewEvent {
    const base = {
      game_id: game.gameId,
      competition_id: game.competitionId,
      sport: game.sport,
      league: game.league,
      season_id: game.seasonId,
      owner_key_id: game.ownerKeyId,
      team: o.team,
      points: o.points,
      ts: isoTime(o.at),
    };
    if (o.kind === 'retracted') {
      return {
        ...base,
        type: 'score_retracted',
        tier: 'provisional',
        event_type: 'score_retracted',
        clock: null,
        agreement: 0,
        reporters: 0,
        latency_ms: 0,
        provisional_id: null,
        retracted_id: this.provisionalOf.get(o.candidateId) ?? null,
      };
    }
    return {
      ...base,
      type: 'score',
      tier: o.kind,
      event_type: o.eventType,
      clock: o.clock,
      agreement: o.confidence.agreement,
      reporters: o.confidence.reporters,
      latency_ms: o.confidence.latency_ms,
      provisional_id: o.kind === 'confirmed' ? (this.provisionalOf.get(o.candidateId) ?? null) : null,
      retracted_id: null,
    };
  }

  private trimMaps(): void {
    // Candidates live for minutes; these maps only need to outlive them (a rebuild restores them).
    for (const m of [this.provisionalOf, this.confirmedOf]) {
      if (m.size > 100_000) {
        const drop = [...m.keys()].slice(0, m.size - 50_000);
        for (const k of drop) m.delete(k);
      }
    }
  }

  private async markLive(games: GameInfo[]): Promise<void> {
    const ids = [...new Set(games.filter((g) => g.status === 'scheduled').map((g) => g.competitionId))];
    if (ids.length === 0) return;
    await this.games.markLive(ids);
    this.onWrite();
    for (const g of games) {
      g.status = 'live';
      this.games.setStatus(g.gameId, 'live');
    }
  }
}
