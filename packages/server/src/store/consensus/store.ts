import type { ReportResult } from '@svc/schema';
import { isoTime } from '../../domain/clock.js';
import type { CandidateChange, CandidateSnapshot, GameSnapshot } from '../../domain/consensus/types.js';
import type { ResolvedOptions } from '../../domain/consensus/options.js';
import type { TrackRecord } from '../../domain/consensus/weights.js';
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

const CANDIDATE_COLUMNS = ['id', 'game_id', 'team', 'points', 'first_observed_at', 'first_received_at', 'event_type', 'clock', 'starter', 'state', 'published', 'official', 'provisional_event_id', 'confirmed_event_id'] as const;
const _everyCandidateColumn: EveryColumn<ConsensusCandidateTable, typeof CANDIDATE_COLUMNS> = CANDIDATE_COLUMNS;
/** What a change may move: the rest of a candidate is fixed when it opens. */
const CANDIDATE_MUTABLE = ['event_type', 'clock', 'state', 'published', 'official', 'provisional_event_id', 'confirmed_event_id'];
const UPSERT_CANDIDATE = new HotSql(
  `insert into consensus_candidates (${CANDIDATE_COLUMNS.join(', ')}) values (${placeholders(CANDIDATE_COLUMNS.length)}) ` +
    `on conflict (id) do update set ${CANDIDATE_MUTABLE.map((c) => `${c} = excluded.${c}`).join(', ')}`,
);

const REPORT_COLUMNS = ['id', 'key_id', 'ref', 'game_id', 'team', 'points', 'event_type', 'clock', 'observed_at', 'received_at', 'event_id', 'tier', 'candidate_id'] as const satisfies readonly (keyof ReportTable)[];
const _everyReportColumn: EveryColumn<ReportTable, typeof REPORT_COLUMNS> = REPORT_COLUMNS;
const INSERT_REPORT = new HotSql(`insert into reports (${REPORT_COLUMNS.join(', ')}) values (${placeholders(REPORT_COLUMNS.length)})`);

const RECORD_OF = new HotSql('select agreed, disagreed from reporter_records where key_id = ?');
/** A reporter's record moved by the candidates that closed in one write: counts added, never set. */
const ADD_TO_RECORD = new HotSql(
  'insert into reporter_records (key_id, agreed, disagreed) values (?, ?, ?) ' +
    'on conflict (key_id) do update set agreed = reporter_records.agreed + excluded.agreed, disagreed = reporter_records.disagreed + excluded.disagreed',
);
const RECORD_MOVED = 'track_record_moved';
const RECORD_IS =
  `case when coalesce((select agreed from reporter_records where key_id = ?), 0) = ? ` +
  `and coalesce((select disagreed from reporter_records where key_id = ?), 0) = ? then 1 else svc_refuse('${RECORD_MOVED}') end`;

/**
 * A reporter's stored track record is not the one a decision weighed: another node moved it (a
 * candidate the reporter voted in closed on a game that node owns) since this node read it. The
 * write is refused; the decision is taken again on the stored record.
 */
export class StaleTrackRecord extends Error {
  constructor(readonly reporterId: string) {
    super(`the track record of ${reporterId} moved on another node`);
    this.name = 'StaleTrackRecord';
  }
}

/** A report row as a write stores it. */
export type NewReport = Omit<ReportTable, 'event_id'> & { event_id: EventIdParam | null };

const isState = (s: string): s is CandidateSnapshot['state'] => s === 'open' || s === 'confirmed' || s === 'retracted';

/**
 * Reads and writes the consensus state that lets any node rebuild a game (docs/consensus.md,
 * "Cluster"): candidates, the votes their reports carry, and reporters' track records. Writes
 * run inside the caller's transaction, beside the events they produced. All the SQL of
 * `consensus_candidates`, `reporter_records` and `reports` is in this module.
 */
export class ConsensusStore {
  constructor(private readonly db: Db) {}

  /**
   * The game as an engine needs it at `now`: open candidates, closed ones still absorbing late
   * reports, their votes (each reporter's observed span over the reports that voted or repeated),
   * and reporters active within the window (by receipt).
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
      candidates.set(r.id, {
        id: r.id,
        gameId: r.game_id,
        team: r.team,
        points: r.points,
        firstObservedAt: Number(r.first_observed_at),
        firstReceivedAt: Number(r.first_received_at),
        eventType: r.event_type,
        clock: r.clock,
        starter: r.starter,
        state: r.state,
        published: r.published === 1,
        official: r.official === 1,
        votes: [],
      });
      if (r.provisional_event_id) provisionalOf.set(r.id, r.provisional_event_id);
      if (r.confirmed_event_id) confirmedOf.set(r.id, r.confirmed_event_id);
    }
    const ids = [...candidates.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const votes = await this.db.kysely
        .selectFrom('reports')
        .select((eb) => ['candidate_id', 'key_id', eb.fn.min('observed_at').as('first'), eb.fn.max('observed_at').as('last')])
        // Every candidate is this game's: the game narrows the read to its own reports through
        // reports_game_received (candidate_id has no index, and by it alone every report is read).
        .where('game_id', '=', gameId)
        .where('candidate_id', 'in', ids.slice(i, i + 500))
        .groupBy(['candidate_id', 'key_id'])
        .execute();
      for (const v of votes) {
        const c = v.candidate_id ? candidates.get(v.candidate_id) : undefined;
        if (c) c.votes.push({ reporterId: v.key_id, first: Date.parse(String(v.first)), last: Date.parse(String(v.last)) });
      }
    }
    const active = await this.db.kysely
      .selectFrom('reports')
      .select((eb) => ['key_id', eb.fn.max('received_at').as('at')])
      .where('game_id', '=', gameId)
      .where('received_at', '>=', isoTime(now - o.activeWindowMs))
      .groupBy('key_id')
      .execute();
    return {
      snapshot: {
        gameId,
        candidates: [...candidates.values()],
        active: active.map((a) => ({ reporterId: a.key_id, receivedAt: Date.parse(String(a.at)) })),
      },
      provisionalOf,
      confirmedOf,
    };
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

  /**
   * Inside a write, ahead of its track record upserts: refuses it (StaleTrackRecord) unless the
   * reporter's stored record is `weighed`, the one its decision used. A node keeps the records it
   * read and moves them itself as its own candidates close; only another node's commit can make
   * them differ, and then the decision is taken again, so no report is weighed on an old record.
   */
  checkRecord(tx: WriteTx, reporterId: string, weighed: TrackRecord): void {
    const refused = () => new StaleTrackRecord(reporterId);
    tx.fence({
      sqlite: {
        q: RECORD_OF,
        params: [reporterId],
        check: ([row]) => {
          if (Number(row?.agreed ?? 0) !== weighed.agreed || Number(row?.disagreed ?? 0) !== weighed.disagreed) throw refused();
        },
      },
      postgres: { expr: RECORD_IS, params: [reporterId, weighed.agreed, reporterId, weighed.disagreed] },
      reason: RECORD_MOVED,
      refused,
    });
  }

  /** Stored track records of these reporters (absent: a newcomer). */
  async records(reporterIds: readonly string[]): Promise<Map<string, TrackRecord>> {
    const out = new Map<string, TrackRecord>();
    const ids = [...new Set(reporterIds)];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.kysely.selectFrom('reporter_records').selectAll().where('key_id', 'in', ids.slice(i, i + 500)).execute();
      for (const r of rows) out.set(r.key_id, { agreed: r.agreed, disagreed: r.disagreed });
    }
    return out;
  }

  /**
   * Stores changed candidates and, for those that closed, their voters' new track records. Every
   * report changes a candidate, so its upsert is a hot write; track records move only when a
   * candidate closes.
   */
  async write(tx: WriteTx, changes: CandidateChange[], eventsOf: (candidateId: string) => { provisional: EventIdParam | null; confirmed: EventIdParam | null }): Promise<void> {
    for (const { candidate: c } of changes) {
      const ev = eventsOf(c.id);
      tx.later(UPSERT_CANDIDATE, [
        c.id, c.gameId, c.team, c.points, c.firstObservedAt, c.firstReceivedAt, c.eventType, c.clock, c.starter, c.state,
        c.published ? 1 : 0, c.official ? 1 : 0, ev.provisional, ev.confirmed,
      ]);
    }
    const moved = new Map<string, TrackRecord>();
    for (const { candidate: c, closed } of changes) {
      if (!closed) continue;
      for (const v of c.votes) {
        const m = moved.get(v.reporterId) ?? { agreed: 0, disagreed: 0 };
        if (c.state === 'confirmed') m.agreed += 1;
        else m.disagreed += 1;
        moved.set(v.reporterId, m);
      }
    }
    // Held like the candidates: on PostgreSQL they go with the commit, not a round trip each.
    for (const [keyId, m] of moved) tx.later(ADD_TO_RECORD, [keyId, m.agreed, m.disagreed]);
  }
}

/** A voter as the operator's list reads it: its stored track record (docs/reporters.md). */
export interface VoterRecord extends TrackRecord {
  voter: string;
}

/** How much a voter has reported: its stored reports and the latest one's arrival. */
export interface VoterActivity {
  reports: number;
  lastReportAt: string | null;
}

/**
 * Reads and writes for the operator's view of the crowd (docs/reporters.md), over the tables
 * ConsensusStore owns: a page of track records, the voters' reports, and the votes a suspension
 * withdraws.
 */
export class ReporterReads {
  constructor(private readonly db: Db) {}

  /** Track records in voter order after `after`, of one key's voters when `keyId` is given. */
  async records(page: { after?: string; keyId?: string; limit: number }): Promise<VoterRecord[]> {
    const { after, keyId, limit } = page;
    const rows = await this.db.kysely
      .selectFrom('reporter_records')
      .selectAll()
      .$if(after !== undefined, (q) => q.where('key_id', '>', after ?? ''))
      // A key's own voice is the key id, its named reporters the key id, a slash and a name. The
      // query's pattern keeps the key id to `key_` and base62: its one LIKE wildcard, that `_`, matches
      // the `_` every voter id has there.
      .$if(keyId !== undefined, (q) => q.where((eb) => eb.or([eb('key_id', '=', keyId ?? ''), eb('key_id', 'like', `${keyId ?? ''}/%`)])))
      .orderBy('key_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ voter: r.key_id, agreed: r.agreed, disagreed: r.disagreed }));
  }

  /** The voter's stored record, undefined when it has none. */
  async record(voter: string): Promise<VoterRecord | undefined> {
    const r = await this.db.kysely.selectFrom('reporter_records').selectAll().where('key_id', '=', voter).executeTakeFirst();
    return r ? { voter: r.key_id, agreed: r.agreed, disagreed: r.disagreed } : undefined;
  }

  /**
   * Gives a voter a record with nothing counted (a newcomer's, as when it has none), so that the
   * list, which walks the records, shows a voter suspended before any of its votes was judged.
   */
  async ensureRecord(voter: string): Promise<void> {
    await this.db.kysely.insertInto('reporter_records').values({ key_id: voter, agreed: 0, disagreed: 0 }).onConflict((oc) => oc.column('key_id').doNothing()).execute();
  }

  /** Stored reports of these voters and the latest one's arrival (reports has no index by key: a scan, for an operator's page). */
  async activity(voters: readonly string[]): Promise<Map<string, VoterActivity>> {
    const out = new Map<string, VoterActivity>();
    const ids = [...new Set(voters)];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.kysely
        .selectFrom('reports')
        .select((eb) => ['key_id', eb.fn.countAll<number | string | bigint>().as('n'), eb.fn.max('received_at').as('last')])
        .where('key_id', 'in', ids.slice(i, i + 500))
        .groupBy('key_id')
        .execute();
      for (const r of rows) out.set(r.key_id, { reports: Number(r.n), lastReportAt: r.last === null ? null : String(r.last) });
    }
    return out;
  }

  /** Whether any report of the voter is stored. */
  async hasReported(voter: string): Promise<boolean> {
    return (await this.db.kysely.selectFrom('reports').select('id').where('key_id', '=', voter).limit(1).executeTakeFirst()) !== undefined;
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
  await (await tx.builder())
    .updateTable('reports')
    .set({ candidate_id: null })
    .where('game_id', '=', gameId)
    .where('key_id', '=', voter)
    .where('candidate_id', 'in', [...candidateIds])
    .execute();
}

/** A key's stored reports with these refs, found through reports_key_ref (which holds reports with a ref only). */
export function reportsByRef(db: Db, keyId: string, refs: readonly string[]) {
  return db.kysely.selectFrom('reports').select(['id', 'ref', 'event_id', 'tier']).where('key_id', '=', keyId).where('ref', 'in', [...refs]);
}
