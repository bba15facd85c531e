import type { ReportInput, ReportResult } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoDate, isoTime, type Clock } from '../domain/clock.js';
import type { ConsensusEngine } from '../domain/consensus/engine.js';
import type { Outcome } from '../domain/consensus/types.js';
import { conflict, invalid } from '../domain/errors.js';
import { randomBase62 } from '../domain/keys.js';
import { requireScope, type Principal } from '../domain/scopes.js';
import type { Db } from '../store/db.js';
import type { EventLog, NewEvent, StoredEvent } from '../store/events.js';
import type { GameDirectory, GameInfo } from './games.js';
import { pointsAllowed } from './sport-rules.js';

/** A promise chain: ingestion runs one batch at a time so the engine and the log agree on order. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * Crowd reports in, events out: validates against the game, runs the ConsensusEngine, appends
 * the resulting events (with their outbox rows) and publishes them on the bus.
 */
export class LiveIngest {
  private readonly serial = new Serial();
  /** consensus candidate → its provisional event id, so the confirmation can name it. */
  private readonly provisionalOf = new Map<string, string>();
  private readonly confirmedOf = new Map<string, string>();
  private readonly gameOfCandidate = new Map<string, GameInfo>();

  constructor(
    private readonly db: Db,
    private readonly games: GameDirectory,
    private readonly log: EventLog,
    private readonly bus: EventBus,
    private readonly engine: ConsensusEngine,
    private readonly clock: Clock,
    private readonly onWrite: () => void = () => undefined,
  ) {}

  /** Validates every report first: one bad report rejects the batch and nothing is stored. */
  async submit(p: Principal, reports: ReportInput[], batched: boolean): Promise<ReportResult[]> {
    const today = isoDate(this.clock.now());
    const resolved: GameInfo[] = [];
    for (const [i, r] of reports.entries()) {
      const at = (field: string) => (batched ? `reports[${i}].${field}` : field);
      const game = await this.games.byGameId(r.game_id);
      if (!game) throw invalid('unknown_game', `No game '${r.game_id}'.`, at('game_id'));
      requireScope(p, game.sport, game.league, at('game_id'));
      if (game.status === 'final') throw conflict('game_final', `Game '${r.game_id}' is final; it takes no more reports.`, at('game_id'));
      if (game.date !== today && game.status !== 'live') {
        throw conflict('game_not_live', `Game '${r.game_id}' is on ${game.date}; reports are taken on game day.`, at('game_id'));
      }
      if (!game.teams.has(r.team)) throw invalid('team_not_in_game', `Team '${r.team}' does not play in ${r.game_id}.`, at('team'));
      if (!pointsAllowed(game.sport, r.points)) {
        throw invalid('invalid_points', `${r.points} points cannot be scored at once in ${game.sport}.`, at('points'));
      }
      if (r.observed_at !== undefined && Number.isNaN(Date.parse(r.observed_at))) {
        throw invalid('invalid_field', "'observed_at' must be an ISO 8601 date-time.", at('observed_at'));
      }
      resolved.push(game);
    }
    return this.serial.run(() => this.process(p, reports, resolved));
  }

  private async process(p: Principal, reports: ReportInput[], games: GameInfo[]): Promise<ReportResult[]> {
    const now = this.clock.now();
    const results: ReportResult[] = [];
    const outcomes: Outcome[] = [];
    const rows: { result: ReportResult; report: ReportInput; game: GameInfo; candidate: string | null; observedAt: number }[] = [];
    const refs = reports.map((r) => r.ref).filter((r): r is string => r !== undefined);
    const known = new Map<string, ReportResult>();
    if (refs.length) {
      const prior = await this.db.kysely
        .selectFrom('reports')
        .select(['id', 'ref', 'event_id', 'tier'])
        .where('key_id', '=', p.keyId)
        .where('ref', 'in', refs)
        .execute();
      for (const r of prior) if (r.ref) known.set(r.ref, { id: r.id, event_id: r.event_id, tier: r.tier === 'confirmed' ? 'confirmed' : 'provisional' });
    }
    const seenRefs = new Map<string, number>();
    for (const [i, r] of reports.entries()) {
      const replay = r.ref !== undefined ? known.get(r.ref) : undefined;
      if (replay) {
        results.push(replay);
        continue;
      }
      if (r.ref !== undefined && seenRefs.has(r.ref)) {
        results.push(results[seenRefs.get(r.ref) ?? 0]);
        continue;
      }
      const observedAt = r.observed_at !== undefined ? Math.min(Date.parse(r.observed_at), now) : now;
      const out = this.engine.submit({
        reporterId: p.keyId,
        gameId: r.game_id,
        team: r.team,
        points: r.points,
        eventType: r.event_type,
        clock: r.clock,
        observedAt,
        receivedAt: now,
      });
      if (out.candidateId) this.gameOfCandidate.set(out.candidateId, games[i]);
      outcomes.push(...out.outcomes);
      const result: ReportResult = { id: `rpt_${randomBase62(20)}`, event_id: null, tier: out.tier };
      rows.push({ result, report: r, game: games[i], candidate: out.candidateId, observedAt });
      if (r.ref !== undefined) seenRefs.set(r.ref, results.length);
      results.push(result);
    }
    await this.emit(outcomes);
    // Each report points at its candidate's newest event: the confirmation once there is one.
    for (const row of rows) {
      const res = row.result;
      if (!row.candidate) continue;
      res.event_id = this.confirmedOf.get(row.candidate) ?? this.provisionalOf.get(row.candidate) ?? null;
      res.tier = this.confirmedOf.has(row.candidate) ? 'confirmed' : 'provisional';
    }
    if (rows.length) {
      await this.db.kysely
        .insertInto('reports')
        .values(
          rows.map((row) => {
            const res = row.result;
            return {
              id: res.id,
              key_id: p.keyId,
              ref: row.report.ref ?? null,
              game_id: row.report.game_id,
              team: row.report.team,
              points: row.report.points,
              event_type: row.report.event_type ?? null,
              clock: row.report.clock ?? null,
              observed_at: isoTime(row.observedAt),
              received_at: isoTime(now),
              event_id: res.event_id,
              tier: res.tier,
            };
          }),
        )
        .execute();
    }
    await this.markLive(games);
    return results;
  }

  /** Official scoring play: confirms at once. Returns the confirmed event, if one was made. */
  async official(game: GameInfo, play: { team: string; points: number; eventType: string; clock?: string; observedAt: number }): Promise<StoredEvent[]> {
    return this.serial.run(async () => {
      const outcomes = this.engine.official({ gameId: game.gameId, team: play.team, points: play.points, eventType: play.eventType, clock: play.clock, observedAt: play.observedAt });
      for (const o of outcomes) if (!this.gameOfCandidate.has(o.candidateId)) this.gameOfCandidate.set(o.candidateId, game);
      return this.emit(outcomes);
    });
  }

  /** Due retractions; called every second by the worker. */
  async tick(): Promise<StoredEvent[]> {
    return this.serial.run(() => this.emit(this.engine.tick()));
  }

  /** The game is final: open candidates are retracted so no provisional stays unresolved. */
  async forgetGame(gameId: string): Promise<StoredEvent[]> {
    return this.serial.run(() => this.emit(this.engine.forgetGame(gameId)));
  }

  private async emit(outcomes: Outcome[]): Promise<StoredEvent[]> {
    if (outcomes.length === 0) return [];
    const rows: NewEvent[] = [];
    const kinds: Outcome[] = [];
    for (const o of outcomes) {
      const game = this.gameOfCandidate.get(o.candidateId);
      if (!game) continue;
      kinds.push(o);
      const base = {
        game_id: game.gameId,
        competition_id: game.competitionId,
        sport: game.sport,
        league: game.league,
        season_id: game.seasonId,
        team: o.team,
        points: o.points,
        ts: isoTime(o.at),
      };
      if (o.kind === 'retracted') {
        rows.push({
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
        });
      } else {
        rows.push({
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
        });
      }
    }
    // A provisional and its confirmation can come out of one call: link them inside the append.
    const indexOfProvisional = new Map<string, number>();
    kinds.forEach((o, i) => {
      if (o.kind === 'provisional') indexOfProvisional.set(o.candidateId, i);
      else if (o.kind === 'confirmed' && rows[i].provisional_id === null) rows[i].provisionalIndex = indexOfProvisional.get(o.candidateId);
    });
    const stored = await this.log.append(rows);
    stored.forEach((s, i) => {
      const o = kinds[i];
      if (o.kind === 'provisional') this.provisionalOf.set(o.candidateId, s.event.id);
      if (o.kind === 'confirmed') this.confirmedOf.set(o.candidateId, s.event.id);
      if (o.kind !== 'provisional') this.gameOfCandidate.delete(o.candidateId);
    });
    this.trimMaps();
    await this.bus.publish(stored);
    return stored;
  }

  private trimMaps(): void {
    // Candidates live for minutes; these maps only need to outlive them.
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
    await this.db.kysely.updateTable('competitions').set({ status: 'live' }).where('id', 'in', ids).where('status', '=', 'scheduled').execute();
    this.onWrite();
    for (const g of games) {
      g.status = 'live';
      this.games.setStatus(g.gameId, 'live');
    }
  }
}

