import type { Selectable } from 'kysely';
import type { ReportResult } from '@svc/schema';
import { isoTime } from '../../domain/clock.js';
import type { CandidateChange, CandidateSnapshot, GameSnapshot } from '../../domain/consensus/types.js';
import type { ResolvedOptions } from '../../domain/consensus/options.js';
import { splitVoter } from '../../domain/consensus/reporter-ids.js';
import { voterId } from '../../domain/consensus/voters.js';
import type { Db } from '../sql/db.js';
import type { ConsensusCandidateTable } from './types.js';
import type { EventIdParam } from '../events/events.js';
import type { ReportTable } from './types.js';
import { HotSql, placeholders, type EveryColumn, type WriteTx } from '../sql/write-tx.js';

/** A game's stored consensus state, with the events its candidates published. */
export interface StoredGame {
  snapshot: GameSnapshot;
  provisionalOf: Map<string, string>;
  confirmedOf: Map<string, string>;
}

const CANDIDATE_COLUMNS = ['id', 'game_id', 'team', 'points', 'first_observed_at', 'first_received_at', 'event_type', 'clock', 'starter', 'state', 'published', 'official', 'provisional_event_id', 'confirmed_event_id', 'judged', 'probability'] as const;
const _everyCandidateColumn: EveryColumn<ConsensusCandidateTable, typeof CANDIDATE_COLUMNS> = CANDIDATE_COLUMNS;
/** What a change may move: the rest of a candidate is fixed when it opens. */
const CANDIDATE_MUTABLE = ['event_type', 'clock', 'state', 'published', 'official', 'provisional_event_id', 'confirmed_event_id', 'judged', 'probability'];
const MARK_JUDGED = new HotSql('update consensus_candidates set judged = 1 where id = ?');
const UPSERT_CANDIDATE = new HotSql(
  `insert into consensus_candidates (${CANDIDATE_COLUMNS.join(', ')}) values (${placeholders(CANDIDATE_COLUMNS.length)}) ` +
    `on conflict (id) do update set ${CANDIDATE_MUTABLE.map((c) => `${c} = excluded.${c}`).join(', ')}`,
);

const REPORT_COLUMNS = ['id', 'key_id', 'ref', 'game_id', 'team', 'points', 'event_type', 'clock', 'observed_at', 'received_at', 'event_id', 'tier', 'candidate_id', 'reporter'] as const satisfies readonly (keyof ReportTable)[];
const _everyReportColumn: EveryColumn<ReportTable, typeof REPORT_COLUMNS> = REPORT_COLUMNS;
const INSERT_REPORT = new HotSql(`insert into reports (${REPORT_COLUMNS.join(', ')}) values (${placeholders(REPORT_COLUMNS.length)})`);

/** A report row as a write stores it. */
export type NewReport = Omit<ReportTable, 'event_id'> & { event_id: EventIdParam | null };

const isState = (s: string): s is CandidateSnapshot['state'] => s === 'open' || s === 'confirmed' || s === 'retracted';

/** A stored candidate as the engine takes it (its votes are read apart). */
function candidateOf(r: Selectable<ConsensusCandidateTable>, state: CandidateSnapshot['state']): CandidateSnapshot {
  return {
    id: r.id,
    gameId: r.game_id,
    team: r.team,
    points: r.points,
    firstObservedAt: Number(r.first_observed_at),
    firstReceivedAt: Number(r.first_received_at),
    eventType: r.event_type,
    clock: r.clock,
    starter: r.starter,
    state,
    published: r.published === 1,
    official: r.official === 1,
    judged: Number(r.judged) === 1,
    probability: r.probability === null ? null : Number(r.probability),
    votes: [],
  };
}

/**
 * Reads and writes the consensus state that lets any node rebuild a game (docs/consensus.md,
 * "Cluster"): candidates and the votes their reports carry (the voters' track records are
 * store/reporters.ts's). Writes run inside the caller's transaction, beside the events they
 * produced. All the SQL of `consensus_candidates` and `reports` is in this module.
 */
export class ConsensusStore {
  constructor(private readonly db: Db) {}

  /**
   * The game as an engine needs it at `now`: open candidates, closed ones still absorbing late
   * reports, their votes (each voter's observed span over the reports that voted or repeated),
   * and the voters present on the game (by receipt, within the presence window).
   */
  async loadGame(gameId: string, now: number, o: ResolvedOptions): Promise<StoredGame> {
    const keepSince = now - (o.retractAfterMs + o.windowMs);
    const rows = await this.db.kysely
      .selectFrom('consensus_candidates')
      .selectAll()
      .where('game_id', '=', gameId)
      .where((eb) => eb.or([eb('state', '=', 'open'), eb('first_received_at', '>', keepSince)]))
      .execute();
    const candidates = new Map<string, CandidateSnapshot>();
    const provisionalOf = new Map<string, string>();
    const confirmedOf = new Map<string, string>();
    for (const r of rows) {
      if (!isState(r.state)) continue;
      candidates.set(r.id, candidateOf(r, r.state));
      if (r.provisional_event_id) provisionalOf.set(r.id, r.provisional_event_id);
      if (r.confirmed_event_id) confirmedOf.set(r.id, r.confirmed_event_id);
    }
    await this.votesOf(gameId, candidates);
    const active = await this.db.kysely
      .selectFrom('reports')
      .select((eb) => ['key_id', 'reporter', eb.fn.max('received_at').as('at')])
      .where('game_id', '=', gameId)
      .where('received_at', '>=', isoTime(now - o.presenceMs))
      .groupBy(['key_id', 'reporter'])
      .execute();
    return {
      snapshot: {
        gameId,
        candidates: [...candidates.values()],
        active: active.map((a) => ({ reporterId: voterId(a.key_id, a.reporter), ...(a.reporter !== null ? { keyId: a.key_id } : {}), receivedAt: Date.parse(String(a.at)) })),
      },
      provisionalOf,
      confirmedOf,
    };
  }

  /**
   * The game's crowd candidates official data has not judged yet, with their votes (domain
   * rule 14): those the engine no longer holds are judged from these.
   */
  async unjudged(gameId: string): Promise<CandidateSnapshot[]> {
    const rows = await this.db.kysely.selectFrom('consensus_candidates').selectAll().where('game_id', '=', gameId).where('judged', '=', 0).where('official', '=', 0).execute();
    const candidates = new Map<string, CandidateSnapshot>();
    for (const r of rows) if (isState(r.state)) candidates.set(r.id, candidateOf(r, r.state));
    await this.votesOf(gameId, candidates);
    return [...candidates.values()];
  }

  /** Marks candidates judged, inside the write that stores the verdicts' record moves. */
  markJudged(tx: WriteTx, ids: readonly string[]): void {
    for (const id of ids) tx.later(MARK_JUDGED, [id]);
  }

  /** Each voter's observed span over the reports that voted for or repeated each candidate. */
  private async votesOf(gameId: string, candidates: Map<string, CandidateSnapshot>): Promise<void> {
    const ids = [...candidates.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const votes = await this.db.kysely
        .selectFrom('reports')
        .select((eb) => ['candidate_id', 'key_id', 'reporter', eb.fn.min('observed_at').as('first'), eb.fn.max('observed_at').as('last')])
        // Every candidate is this game's: the game narrows the read to its own reports through
        // reports_game_received (candidate_id has no index, and by it alone every report is read).
        .where('game_id', '=', gameId)
        .where('candidate_id', 'in', ids.slice(i, i + 500))
        .groupBy(['candidate_id', 'key_id', 'reporter'])
        .execute();
      for (const v of votes) {
        const c = v.candidate_id ? candidates.get(v.candidate_id) : undefined;
        if (!c) continue;
        const vote = { reporterId: voterId(v.key_id, v.reporter), first: Date.parse(String(v.first)), last: Date.parse(String(v.last)) };
        c.votes.push(v.reporter !== null ? { ...vote, keyId: v.key_id } : vote);
      }
    }
  }

  /** What a key's earlier reports with these refs were answered: a ref sent again gets the same answer. */
  async priorReports(keyId: string, refs: readonly string[]): Promise<Map<string, ReportResult>> {
    const known = new Map<string, ReportResult>();
    if (refs.length === 0) return known;
    for (const r of await reportsByRef(this.db, keyId, refs).execute()) {
      if (r.ref) known.set(r.ref, { id: r.id, event_id: r.event_id, tier: r.tier === 'confirmed' ? 'confirmed' : 'provisional' });
    }
    return known;
  }

  /** Stores reports inside the append's transaction. */
  async insertReports(tx: WriteTx, reports: readonly NewReport[]): Promise<void> {
    // One report per request is the common case and a hot write; a batch keeps one multi-row statement.
    if (reports.length === 1) tx.later(INSERT_REPORT, REPORT_COLUMNS.map((c) => reports[0][c]));
    else tx.laterRows('reports', REPORT_COLUMNS, reports.map((r) => REPORT_COLUMNS.map((c) => r[c])));
  }

  /** Stores changed candidates. Every report changes a candidate, so its upsert is a hot write. */
  write(tx: WriteTx, changes: CandidateChange[], eventsOf: (candidateId: string) => { provisional: EventIdParam | null; confirmed: EventIdParam | null }): void {
    for (const { candidate: c } of changes) {
      const ev = eventsOf(c.id);
      tx.later(UPSERT_CANDIDATE, [
        c.id, c.gameId, c.team, c.points, c.firstObservedAt, c.firstReceivedAt, c.eventType, c.clock, c.starter, c.state,
        c.published ? 1 : 0, c.official ? 1 : 0, ev.provisional, ev.confirmed, c.judged ? 1 : 0, c.probability,
      ]);
    }
  }
}

/**
 * Reads for the operator's view of the crowd (docs/reporters.md) over the tables ConsensusStore
 * owns: whether a voter has reported, and the games where a suspension may find its votes. The
 * voters' track records, counts and last report are store/consensus/reporters.ts's.
 */
export class ReporterReads {
  constructor(private readonly db: Db) {}

  /** Whether any report of the voter is stored. */
  async hasReported(voter: string): Promise<boolean> {
    const { keyId, reporter } = splitVoter(voter);
    const r = await this.db.kysely
      .selectFrom('reports')
      .select('id')
      .where('key_id', '=', keyId)
      .$if(reporter === null, (q) => q.where('reporter', 'is', null))
      .$if(reporter !== null, (q) => q.where('reporter', '=', reporter ?? ''))
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** Games holding an open candidate: where a suspended voter may still have votes. */
  async gamesWithOpenCandidates(): Promise<string[]> {
    const rows = await this.db.kysely.selectFrom('consensus_candidates').select('game_id').distinct().where('state', '=', 'open').execute();
    return rows.map((r) => r.game_id);
  }
}

/**
 * Inside a consensus write: the voter's reports no longer vote for these candidates of the game
 * (a suspension withdrew them), so a node rebuilding the game does not count them again.
 */
export async function withdrawVotes(tx: WriteTx, gameId: string, voter: string, candidateIds: readonly string[]): Promise<void> {
  if (candidateIds.length === 0) return;
  const { keyId, reporter } = splitVoter(voter);
  await (await tx.builder())
    .updateTable('reports')
    .set({ candidate_id: null })
    .where('game_id', '=', gameId)
    .where('key_id', '=', keyId)
    .$if(reporter === null, (q) => q.where('reporter', 'is', null))
    .$if(reporter !== null, (q) => q.where('reporter', '=', reporter ?? ''))
    .where('candidate_id', 'in', [...candidateIds])
    .execute();
}

/** A key's stored reports with these refs, found through reports_key_ref (which holds reports with a ref only). */
export function reportsByRef(db: Db, keyId: string, refs: readonly string[]) {
  return db.kysely.selectFrom('reports').select(['id', 'ref', 'event_id', 'tier']).where('key_id', '=', keyId).where('ref', 'in', [...refs]);
}
