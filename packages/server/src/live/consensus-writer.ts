import type { ReportInput, ReportResult } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoTime, type Clock } from '../domain/clock.js';
import type { CandidateChange, Outcome, RecordMove } from '../domain/consensus/types.js';
import type { TrackRecord } from '../domain/consensus/weights.js';
import { competitionChange, consensusScores } from '../store/reference/competitions.js';
import { insertChangesTx } from '../store/events/changes.js';
import { withdrawVotes, type ConsensusStore, type NewReport, type StoredGame } from '../store/consensus/store.js';
import type { ReporterStore, VoterReports } from '../store/consensus/reporters.js';
import type { EventIdParam, EventLog, NewEvent, StoredEvent } from '../store/events/events.js';
import type { GameLeases } from '../store/consensus/leases.js';
import type { GameDirectory, GameInfo } from './games.js';
import type { Speaker } from './voters.js';

/** A report the engine has taken, waiting to be stored with the events its decision produced. */
export interface TakenReport {
  /** What the caller is answered: its event id and tier are filled in once the events are stored. */
  result: ReportResult;
  input: ReportInput;
  /** Who it speaks for: the voter under the key. */
  speaker: Speaker;
  /** The candidate the report voted for (null for a repeat). */
  voted: string | null;
  /** The candidate stored with the report: the one it voted for or the one it repeated. */
  candidate: string | null;
  observedAt: number;
}

/** One call's reports for one game, from one key (each report names its voter). */
export interface TakenReports {
  gameId: string;
  keyId: string;
  receivedAt: number;
  reports: TakenReport[];
  /** The voters' track records the decisions weighed, checked against the stored ones in the write (a cluster's node). */
  weighed?: Map<string, TrackRecord>;
}

/** What the engine decided besides its outcomes and candidates: records moved, candidates official data judged. */
export interface Verdicts {
  moves: RecordMove[];
  judged: { gameId: string; ids: string[] }[];
}

/** An official play and the candidate it settled: the play's row takes the candidate's confirmed event (docs/corrections.md). */
export interface PlayLink {
  gameId: string;
  candidateId: string;
  seq: number;
}

/** A suspended voter's votes, taken out of these candidates of the game (docs/reporters.md). */
export interface WithdrawnVotes {
  gameId: string;
  voter: string;
  candidateIds: string[];
}

/** Candidates live for minutes: the maps of their events need only outlive them (a rebuild restores them). */
const EVENT_MAP_CAP = { over: 100_000, keep: 50_000 } as const;

/**
 * Makes what the consensus decided durable (docs/consensus.md, "Cluster"): each outcome becomes
 * an event, stored with the candidates that changed, the track records that moved and the reports
 * that caused it, in one transaction per game fenced by the game's lease. Then the events go on
 * the bus, whose subscribers are every node's stream gateway (stream/gateway.ts, handed the bus in
 * app.ts) and the feed health and status page (services.ts). The webhook deliveries were written
 * in the append's transaction already (store/events/events.ts, the outbox hook); docs/architecture.md,
 * "A report's path", follows the whole way.
 */
export class ConsensusWriter {
  /** candidate → its provisional event, so its confirmation or retraction can name it. */
  private readonly provisionalOf = new Map<string, string>();
  /** candidate → its confirmation, so a late report points at it. */
  private readonly confirmedOf = new Map<string, string>();
  /**
   * Games an official source covers, as a crowd confirmation found them: coverage never ends
   * (plays are never removed), so their next crowd confirmations skip the crowd score's read
   * and lock (docs/corrections.md). A node that forgets finds out again with one write.
   */
  private readonly covered = new Set<string>();

  constructor(
    private readonly games: GameDirectory,
    private readonly log: EventLog,
    private readonly state: ConsensusStore,
    private readonly reporters: ReporterStore,
    private readonly leases: GameLeases,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  /** A game's state was rebuilt from the store: its candidates' events with it. */
  restore(stored: StoredGame): void {
    for (const [c, e] of stored.provisionalOf) this.provisionalOf.set(c, e);
    for (const [c, e] of stored.confirmedOf) this.confirmedOf.set(c, e);
  }

  /**
   * Stores `outcomes`, the candidates' `changes` and `taken` reports, one fenced transaction per
   * game, then publishes what was stored. A game whose write fails is handed to `failed` (its
   * engine state may be ahead of the store) and the first error is rethrown after the others are
   * written and published.
   */
  async write(
    outcomes: Outcome[],
    changes: CandidateChange[],
    verdicts: Verdicts,
    taken: TakenReports[],
    failed: (gameId: string) => void,
    links: readonly PlayLink[] = [],
    withdrawn: readonly WithdrawnVotes[] = [],
  ): Promise<StoredEvent[]> {
    const perGame = new Map<string, GameWork>();
    const of = (g: string) => {
      let e = perGame.get(g);
      if (!e) {
        e = { outcomes: [], changes: [], taken: [], moves: [], judged: [], links: [], withdrawn: [] };
        perGame.set(g, e);
      }
      return e;
    };
    for (const o of outcomes) of(o.gameId).outcomes.push(o);
    for (const c of changes) of(c.candidate.gameId).changes.push(c);
    for (const t of taken) of(t.gameId).taken.push(t);
    for (const m of verdicts.moves) of(m.gameId).moves.push(m);
    for (const j of verdicts.judged) of(j.gameId).judged.push(...j.ids);
    for (const l of links) of(l.gameId).links.push(l);
    for (const w of withdrawn) of(w.gameId).withdrawn.push(w);
    const all: StoredEvent[] = [];
    let failure: unknown = null;
    for (const [gameId, work] of perGame) {
      try {
        all.push(...(await this.writeGame(gameId, work)));
      } catch (err) {
        failed(gameId);
        failure ??= err;
      }
    }
    this.trim();
    // This node's own listeners (its streams) have the events when publish returns; Redis's
    // acknowledgement of the batch is not waited for. The events are stored, publish never fails,
    // and one connection keeps the batches in order: the reporter's answer and the game's next
    // report need not wait a Redis round trip (bench/history/2026-12-07.md).
    if (all.length) void this.bus.publish(all);
    if (failure) throw failure;
    return all;
  }

  private async writeGame(gameId: string, { outcomes, changes, taken, moves, judged, links, withdrawn }: GameWork): Promise<StoredEvent[]> {
    const game = await this.games.byGameId(gameId);
    if (!game) throw new Error(`consensus outcome for unknown game ${gameId}`);
    const rows: NewEvent[] = outcomes.map((o) => outcomeEvent(game, o, (c) => this.provisionalOf.get(c) ?? null));
    // A provisional and its confirmation can come out of one call: link them inside the append.
    const indexOfProvisional = new Map<string, number>();
    outcomes.forEach((o, i) => {
      if (o.kind === 'provisional') indexOfProvisional.set(o.candidateId, i);
      else if (o.kind === 'confirmed' && rows[i].provisional_id === null) rows[i].provisionalIndex = indexOfProvisional.get(o.candidateId);
    });
    // This write's events by candidate: on PostgreSQL their ids are the database's until the commit.
    const provisional = new Map<string, EventIdParam>();
    const confirmed = new Map<string, EventIdParam>();
    const ids: EventIds = {
      provisional: (c) => provisional.get(c) ?? this.provisionalOf.get(c) ?? null,
      confirmed: (c) => confirmed.get(c) ?? this.confirmedOf.get(c) ?? null,
    };
    // A confirmation may move the crowd's own game's score and an official play takes its event:
    // both write the competition's rows, so the write holds the competition's row first, as
    // every writer of its plays and scores does (store/reference/competitions.ts).
    const crowd = this.covered.has(gameId) ? [] : outcomes.filter((o) => o.kind === 'confirmed' && !o.official);
    const scores = crowd.length > 0 || links.length > 0;
    // Whether a crowd score moved, known once the write is sent.
    let crowdMoved = () => false;
    const stored = await this.log.append(rows, {
      before: async (tx) => {
        await this.leases.fence(tx, gameId);
        if (scores) consensusScores.lock(tx, game.competitionId);
      },
      within: async (tx, eventIds) => {
        eventIds.forEach((id, i) => {
          const o = outcomes[i];
          if (o.kind === 'provisional') provisional.set(o.candidateId, id);
          if (o.kind === 'confirmed') confirmed.set(o.candidateId, id);
        });
        this.state.write(tx, changes, (id) => ({ provisional: ids.provisional(id), confirmed: ids.confirmed(id) }));
        await this.state.insertReports(tx, taken.flatMap((t) => reportRows(t, ids)));
        // The records the decisions weighed are checked as their rows are moved (ReporterStore.write).
        this.reporters.write(tx, moves, taken.flatMap(voterReports), isoTime(this.clock.now()), weighedOf(taken));
        this.state.markJudged(tx, judged);
        for (const w of withdrawn) await withdrawVotes(tx, gameId, w.voter, w.candidateIds);
        for (const l of links) {
          const event = ids.confirmed(l.candidateId);
          if (event !== null) consensusScores.link(tx, game.competitionId, l.seq, event);
        }
        const head = { id: game.competitionId, sport: game.sport, league: game.league, owner_key_id: game.ownerKeyId };
        if (crowd.length === 1) {
          // The usual confirmation: the score and its change row held with the rest, no round trip of their own.
          const idx = game.teams.get(crowd[0].team)?.idx;
          if (idx !== undefined) crowdMoved = consensusScores.crowdScoreAndChange(tx, game.competitionId, idx, crowd[0].points, competitionChange('competition.updated', head, isoTime(crowd[0].at)));
        } else if (crowd.length > 1) {
          let moved = false;
          for (const o of crowd) {
            const idx = game.teams.get(o.team)?.idx;
            if (idx !== undefined && (await consensusScores.crowdScore(tx, game.competitionId, idx, o.points))) moved = true;
          }
          if (moved) insertChangesTx(tx, [competitionChange('competition.updated', head, isoTime(Math.max(...crowd.map((o) => o.at))))]);
          crowdMoved = () => moved;
        }
      },
    });
    // Committed. No crowd score moved, or an official play was linked: an official source covers the game.
    if ((crowd.length > 0 && !crowdMoved()) || links.length > 0) this.covered.add(gameId);
    // The maps and the answers take the ids the database gave.
    stored.forEach((s, i) => {
      const o = outcomes[i];
      if (o.kind === 'provisional') this.provisionalOf.set(o.candidateId, s.event.id);
      if (o.kind === 'confirmed') this.confirmedOf.set(o.candidateId, s.event.id);
    });
    for (const t of taken) {
      for (const r of t.reports) {
        if (!r.voted) continue;
        const confirmedId = this.confirmedOf.get(r.voted);
        r.result.event_id = confirmedId ?? this.provisionalOf.get(r.voted) ?? null;
        r.result.tier = confirmedId ? 'confirmed' : 'provisional';
      }
    }
    return stored;
  }

  private trim(): void {
    if (this.covered.size > EVENT_MAP_CAP.over) this.covered.clear();
    for (const m of [this.provisionalOf, this.confirmedOf]) {
      if (m.size > EVENT_MAP_CAP.over) {
        const drop = [...m.keys()].slice(0, m.size - EVENT_MAP_CAP.keep);
        for (const k of drop) m.delete(k);
      }
    }
  }
}

/** One game's share of a write. */
interface GameWork {
  outcomes: Outcome[];
  changes: CandidateChange[];
  taken: TakenReports[];
  moves: RecordMove[];
  judged: string[];
  links: PlayLink[];
  withdrawn: WithdrawnVotes[];
}

/** The track records the call's decisions weighed, by voter (none on a single node). */
function weighedOf(taken: readonly TakenReports[]): Map<string, TrackRecord> | undefined {
  const all = taken.filter((t) => t.weighed !== undefined);
  if (all.length === 0) return undefined;
  const out = new Map<string, TrackRecord>();
  for (const t of all) for (const [voter, record] of t.weighed ?? []) out.set(voter, record);
  return out;
}

/** Each voter's reports of a call, counted into its track record (reports, last report). */
function voterReports(t: TakenReports): VoterReports[] {
  const at = isoTime(t.receivedAt);
  const byVoter = new Map<string, VoterReports>();
  for (const r of t.reports) {
    const v = byVoter.get(r.speaker.voter);
    if (v) v.reports += 1;
    else byVoter.set(r.speaker.voter, { voter: r.speaker.voter, keyId: t.keyId, reports: 1, lastReportAt: at });
  }
  return [...byVoter.values()];
}

/** A candidate's events as a write names them: stored ids, or the database's until its commit. */
interface EventIds {
  provisional(candidateId: string): EventIdParam | null;
  confirmed(candidateId: string): EventIdParam | null;
}

/** Each report points at its candidate's newest event: the confirmation once there is one. */
function reportRows(t: TakenReports, ids: EventIds): NewReport[] {
  return t.reports.map((r) => {
    const res = r.result;
    const confirmed = r.voted ? ids.confirmed(r.voted) : null;
    const event = r.voted ? (confirmed ?? ids.provisional(r.voted)) : res.event_id;
    return {
      id: res.id,
      key_id: t.keyId,
      reporter: r.speaker.reporter,
      ref: r.input.ref ?? null,
      game_id: t.gameId,
      team: r.input.team,
      points: r.input.points,
      event_type: r.input.event_type ?? null,
      clock: r.input.clock ?? null,
      observed_at: isoTime(r.observedAt),
      received_at: isoTime(t.receivedAt),
      event_id: event,
      tier: r.voted ? (confirmed ? 'confirmed' : 'provisional') : res.tier,
      candidate_id: r.candidate,
    };
  });
}

/** The event an outcome publishes; a confirmation or retraction names its provisional (`provisionalOf`). */
export function outcomeEvent(game: GameInfo, o: Outcome, provisionalOf: (candidateId: string) => string | null): NewEvent {
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
      // The probability of the event it withdraws: a min_probability filter passes both or neither.
      probability: o.probability,
      provisional_id: null,
      retracted_id: provisionalOf(o.candidateId),
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
    probability: o.confidence.probability,
    provisional_id: o.kind === 'confirmed' ? provisionalOf(o.candidateId) : null,
    retracted_id: null,
  };
}
