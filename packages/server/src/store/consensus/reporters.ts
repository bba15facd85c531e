import type { RecordMove } from '../../domain/consensus/types.js';
import { reporterOf } from '../../domain/consensus/voters.js';
import { addDeltas, applyDelta, CONTRADICTION_COST, NEW_RECORD, NO_DELTA, PROBATION_WEIGHT, REDEEM_AFTER, trackRecord, weightOf, type RecordDelta, type TrackRecord } from '../../domain/consensus/weights.js';
import type { Db } from '../sql/db.js';
import { HotSql, placeholders, type WriteTx } from '../sql/write-tx.js';

const COLUMNS = ['voter', 'key_id', 'reporter', 'reports', 'agreed', 'disagreed', 'official_confirmed', 'official_contradicted', 'missed', 'probation', 'weight', 'last_report_at', 'created_at'] as const;

/**
 * A record's stored columns moved by `excluded.*` (the move's counts, on insert the whole row), in
 * SQL: the counts added, the probation (re)started by a contradiction or shortened by official
 * confirmations, and the weight from the new counts (weights.ts `weightOf`, written once more here
 * so that nodes moving one reporter at once each add to the stored counts).
 */
const after = (col: string) => `(reporters.${col} + excluded.${col})`;
const PROBATION = `case when excluded.official_contradicted > 0 then ${REDEEM_AFTER} when reporters.probation > excluded.official_confirmed then reporters.probation - excluded.official_confirmed else 0 end`;
const A = `(${after('agreed')} + ${after('official_confirmed')})`;
const D = `(${after('disagreed')} + ${CONTRADICTION_COST} * ${after('official_contradicted')})`;
const BASE = `((${A} + 1.0) / (${A} + ${D} + 2.0))`;
const WEIGHT = `case when (${PROBATION}) > 0 and ${BASE} > ${PROBATION_WEIGHT} then ${PROBATION_WEIGHT} else ${BASE} end`;
const upsertText = (reports: string) =>
  `insert into reporters (${COLUMNS.join(', ')}) values (${placeholders(COLUMNS.length)}) on conflict (voter) do update set ` +
  [
    `reports = ${reports}`,
    ...['agreed', 'disagreed', 'official_confirmed', 'official_contradicted', 'missed'].map((c) => `${c} = ${after(c)}`),
    `probation = ${PROBATION}`,
    `weight = ${WEIGHT}`,
    `last_report_at = case when excluded.last_report_at is null then reporters.last_report_at when reporters.last_report_at is null or excluded.last_report_at > reporters.last_report_at then excluded.last_report_at else reporters.last_report_at end`,
  ].join(', ');
const UPSERT = new HotSql(upsertText(after('reports')));

const RECORD_MOVED = 'track_record_moved';
/** The refusal's message on PostgreSQL: names the voter, so the node reads that record again. */
const recordMoved = (voter: string) => `${RECORD_MOVED} ${voter}`;
/** The stored counts, as the record check compares them with the ones a decision weighed (`?` ×6, in TrackRecord's order). */
const STORED_IS = `reporters.agreed = ? and reporters.disagreed = ? and reporters.official_confirmed = ? and reporters.official_contradicted = ? and reporters.missed = ? and reporters.probation = ?`;
/**
 * The upsert of a voter whose record a decision weighed: on PostgreSQL, a stored row that is not
 * the record weighed refuses the write (`svc_refuse`) as the row is moved, so the check reads
 * nothing of its own and sees the row as it is locked for the update. On SQLite, where the
 * refusal's read ran just before in the same single-writer transaction, the other branch cannot
 * be reached (and would fail: `reports` is not null).
 */
const UPSERT_CHECKED = new HotSql(
  upsertText(`case when ${STORED_IS} then ${after('reports')} else null end`),
  upsertText(`case when ${STORED_IS} then ${after('reports')} else svc_refuse('${RECORD_MOVED} ' || reporters.voter) end`),
);

const RECORD_OF = new HotSql('select agreed, disagreed, official_confirmed, official_contradicted, missed, probation from reporters where voter = ?');
/** The fence's PostgreSQL expression: the stored record as text, or a newcomer's, against the one weighed. */
const RECORD_IS =
  `case when coalesce((select agreed || ',' || disagreed || ',' || official_confirmed || ',' || official_contradicted || ',' || missed || ',' || probation from reporters where voter = ?), '0,0,0,0,0,0') = ? ` +
  `then 1 else svc_refuse(?) end`;
const recordText = (r: TrackRecord): string => [r.agreed, r.disagreed, r.officialConfirmed, r.officialContradicted, r.missed, r.probation].join(',');

/**
 * A reporter's stored track record is not the one a decision weighed: another node moved it (a
 * candidate the reporter voted in closed, or official data judged it, on a game that node owns)
 * since this node read it. The write is refused; the decision is taken again on the stored record.
 */
export class StaleTrackRecord extends Error {
  constructor(readonly reporterId: string) {
    super(`the track record of ${reporterId} moved on another node`);
    this.name = 'StaleTrackRecord';
  }
}

/** A voter's stored row as the operator's list reads it (docs/reporters.md). */
export interface StoredVoter extends TrackRecord {
  voter: string;
  keyId: string;
  reporter: string | null;
  /** Its stored reports, counted or not. */
  reports: number;
  weight: number;
  lastReportAt: string | null;
}

const storedVoterOf = (r: Record<string, unknown>): StoredVoter => ({
  ...countsOf(r),
  voter: String(r.voter),
  keyId: String(r.key_id),
  reporter: r.reporter === null || r.reporter === undefined ? null : String(r.reporter),
  reports: Number(r.reports),
  weight: Number(r.weight),
  lastReportAt: r.last_report_at === null || r.last_report_at === undefined ? null : String(r.last_report_at),
});

/** Reports a write takes from one voter: how many, and the latest receipt. */
export interface VoterReports {
  voter: string;
  keyId: string;
  reports: number;
  lastReportAt: string;
}

const countsOf = (r: Record<string, unknown>): TrackRecord =>
  trackRecord({
    agreed: Number(r.agreed),
    disagreed: Number(r.disagreed),
    officialConfirmed: Number(r.official_confirmed),
    officialContradicted: Number(r.official_contradicted),
    missed: Number(r.missed),
    probation: Number(r.probation),
  });

/**
 * Voters' track records (domain/consensus/weights.ts; docs/consensus.md "Threat model"): one row
 * per key reporting in its own voice or reporter a key names, with its reports, agreements,
 * official verdicts, misses, probation and weight. Moves add to the stored counts inside the
 * caller's write transaction, beside the events and candidates that moved them. All the SQL of
 * `reporters` is in this module.
 */
export class ReporterStore {
  constructor(private readonly db: Db) {}

  /** Stored records of these voters (absent: a newcomer). */
  async records(voters: readonly string[]): Promise<Map<string, TrackRecord>> {
    const out = new Map<string, TrackRecord>();
    const ids = [...new Set(voters)];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.kysely.selectFrom('reporters').selectAll().where('voter', 'in', ids.slice(i, i + 500)).execute();
      for (const r of rows) out.set(r.voter, countsOf(r));
    }
    return out;
  }

  /**
   * Inside a write, ahead of its record moves: refuses it (StaleTrackRecord) unless the voter's
   * stored record is `weighed`, the one its decision used. A node keeps the records it read and
   * moves them itself as its own candidates close and its games are judged; only another node's
   * commit can make them differ, and then the decision is taken again, so no report is weighed on
   * an old record.
   */
  checkRecord(tx: WriteTx, voter: string, weighed: TrackRecord): void {
    const refused = () => new StaleTrackRecord(voter);
    tx.fence({
      sqlite: {
        q: RECORD_OF,
        params: [voter],
        check: ([row]) => {
          if (recordText(row ? countsOf(row) : NEW_RECORD) !== recordText(weighed)) throw refused();
        },
      },
      postgres: { expr: RECORD_IS, params: [voter, recordText(weighed), recordMoved(voter)] },
      reason: recordMoved(voter),
      refused,
    });
  }

  /** Records in voter order after `after` (a key's own voice, then the reporters it names), of one key's voters when `keyId` is given. */
  async page(q: { after?: string; keyId?: string; limit: number }): Promise<StoredVoter[]> {
    const rows = await this.db.kysely
      .selectFrom('reporters')
      .selectAll()
      .$if(q.after !== undefined, (b) => b.where('voter', '>', q.after ?? ''))
      .$if(q.keyId !== undefined, (b) => b.where('key_id', '=', q.keyId ?? ''))
      .orderBy('voter')
      .limit(q.limit)
      .execute();
    return rows.map(storedVoterOf);
  }

  /** The voter's stored record, undefined when it has none. */
  async one(voter: string): Promise<StoredVoter | undefined> {
    const r = await this.db.kysely.selectFrom('reporters').selectAll().where('voter', '=', voter).executeTakeFirst();
    return r ? storedVoterOf(r) : undefined;
  }

  /**
   * Gives a voter a record with nothing counted (a newcomer's, as when it has none), so that the
   * operator's list, which walks the records, shows a voter suspended before any of its reports
   * was stored.
   */
  async ensure(voter: string, keyId: string, now: string): Promise<void> {
    const fresh = NEW_RECORD;
    await this.db.kysely
      .insertInto('reporters')
      .values({
        voter, key_id: keyId, reporter: reporterOf(voter, keyId), reports: 0, agreed: 0, disagreed: 0, official_confirmed: 0, official_contradicted: 0, missed: 0,
        probation: 0, weight: weightOf(fresh), last_report_at: null, created_at: now,
      })
      .onConflict((oc) => oc.column('voter').doNothing())
      .execute();
  }

  /**
   * Adds the moves and the reports taken to the voters' stored records, in the caller's
   * transaction. `weighed`: the records the write's decisions weighed (a cluster's node), each
   * checked against the stored one as its row is moved: a record another node moved since this
   * node read it refuses the write (StaleTrackRecord), the check riding on the upsert the report
   * makes anyway rather than reading the row first.
   */
  write(tx: WriteTx, moves: readonly RecordMove[], reports: readonly VoterReports[], now: string, weighed?: ReadonlyMap<string, TrackRecord>): void {
    const rows = new Map<string, { keyId: string; delta: RecordDelta; reports: number; last: string | null }>();
    for (const m of moves) {
      const r = rows.get(m.voter) ?? { keyId: m.keyId, delta: NO_DELTA, reports: 0, last: null };
      r.delta = { ...r.delta, ...addDeltas(r.delta, m.delta) };
      rows.set(m.voter, r);
    }
    for (const t of reports) {
      const r = rows.get(t.voter) ?? { keyId: t.keyId, delta: NO_DELTA, reports: 0, last: null };
      r.reports += t.reports;
      if (r.last === null || t.lastReportAt > r.last) r.last = t.lastReportAt;
      rows.set(t.voter, r);
    }
    for (const [voter, r] of rows) {
      // On insert the row is the move itself; on conflict the same values are what it adds.
      const d = r.delta;
      const params = [
        voter, r.keyId, reporterOf(voter, r.keyId), r.reports, d.agreed, d.disagreed, d.officialConfirmed, d.officialContradicted, d.missed,
        applyDelta(NEW_RECORD, d).probation, weightOf(applyDelta(NEW_RECORD, d)), r.last, now,
      ];
      const w = weighed?.get(voter);
      if (w === undefined) tx.later(UPSERT, params);
      else {
        // A voter with no row yet was weighed as a newcomer by every node: an insert needs no check
        // (a node whose own failed write moved it in memory reads it again first: live/ingest.ts).
        const seen = [w.agreed, w.disagreed, w.officialConfirmed, w.officialContradicted, w.missed, w.probation];
        tx.laterRefusing(UPSERT_CHECKED, [...params, ...seen], this.refusal(voter, w));
      }
    }
    // A voter weighed but with nothing to write (every report of it a replay): checked alone.
    if (weighed) for (const [voter, w] of weighed) if (!rows.has(voter)) this.checkRecord(tx, voter, w);
  }

  /** Refuses the write unless the voter's stored record is `weighed` (SQLite's read; PostgreSQL's message). */
  private refusal(voter: string, weighed: TrackRecord) {
    return {
      sqlite: {
        q: RECORD_OF,
        params: [voter],
        check: ([row]: Record<string, unknown>[]) => {
          if (recordText(row ? countsOf(row) : NEW_RECORD) !== recordText(weighed)) throw new StaleTrackRecord(voter);
        },
      },
      reason: recordMoved(voter),
      refused: () => new StaleTrackRecord(voter),
    };
  }
}

