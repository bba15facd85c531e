import { sql } from 'kysely';
import type { Db } from '../sql/db.js';
import type { PlayTable } from '../reference/types.js';
import { PgEventLines, SqliteEventLines, type EventLinePage, type EventLinePages } from './lines.js';
import { SqliteRowReader } from '../sql/row-reader.js';

/**
 * What one export reads: the season(s) of a league, only competitions the `archive` product may
 * read (final, dated before `today`), and the optional time range already normalised.
 */
export interface ExportSlice {
  league: string;
  seasonIds: readonly string[];
  today: string;
  /** Inclusive and exclusive bounds on event `ts` (ISO 8601 UTC with milliseconds). */
  fromTs?: string;
  toTs?: string;
  /** Only events up to this seq: the event log's head when the export's X-Changes-Cursor was read (docs/changes.md). */
  throughSeq?: number;
  /** Only events of these types (`types`); absent for all. */
  types?: readonly string[];
  /** Inclusive and exclusive bounds on the competition `date` (YYYY-MM-DD). */
  fromDate?: string;
  toDate?: string;
}

export interface CompetitionPosition {
  id: string;
  date: string;
  league: string;
  season_id: string;
  status: string;
}

/** Whether the export's events and plays include this competition's. */
export function inSlice(c: { date: string; status: string }, s: ExportSlice): boolean {
  return (c.status === 'final' || c.status === 'cancelled') && c.date < s.today && (s.fromDate === undefined || c.date >= s.fromDate) && (s.toDate === undefined || c.date < s.toDate);
}

/**
 * Keyset pages for the bulk export. Each page is a short query that takes and releases its
 * connection, so a slow reader never holds a database connection (nor, on SQLite, the single
 * connection every other request needs) between pages.
 *
 * The queries are deliberately single-table range scans whose only sensible plan walks one index
 * in export order (events by (season_id, seq), competitions by (season_id, date, id), plays by
 * their primary key). A join with the eligibility filters in SQL lets PostgreSQL, whenever its
 * statistics lag (right after a bulk load), pick a plan that sorts the rest of the season on
 * every page; filters that are cheap in memory are applied by the caller instead.
 */
export class ExportRepo {
  private readonly eventLines: EventLinePages;
  /**
   * Rows per keyset page: large enough to amortise a query, small enough to keep memory flat.
   * SQLite's page is one text joined in-process, and past ~128 KiB a string is a large object
   * the collector lets pile up, so 250 rows (~75 KiB) serve faster and with far less memory than
   * 1,000. PostgreSQL pays a round trip per page, which 1,000 rows amortise (bench/history/2026-11-24.md,
   * "Export: the line stored with the event", for the figures).
   */
  readonly pageRows: number;

  constructor(private readonly db: Db) {
    this.pageRows = db.engine === 'sqlite' ? 250 : 1000;
    if (db.sqliteFile) this.eventLines = new SqliteEventLines(new SqliteRowReader(db.sqliteFile, 8192));
    else if (db.bulk.pgPool) this.eventLines = new PgEventLines(db.bulk.pgPool);
    else throw new Error('ExportRepo needs a SQLite file or a PostgreSQL pool (openDb provides one)');
  }

  close(): Promise<void> {
    return this.eventLines.close();
  }

  /**
   * Confirmed events of the season after `afterSeq`, in `seq` order, as export lines
   * (store/events/lines.ts); those of `excluded` competitions are read and left out.
   */
  events(s: ExportSlice, afterSeq: number, limit: number, excluded: readonly string[] = []): Promise<EventLinePage> {
    return this.eventLines.page({ seasonIds: s.seasonIds, afterSeq, fromTs: s.fromTs, toTs: s.toTs, throughSeq: s.throughSeq, types: s.types, excluded, limit });
  }

  /**
   * The first confirmed event, up to `throughSeq`, of the competitions an export leaves out (those
   * not settled yet): undefined when they have none. The export stops before it and the change
   * feed's cursor is set before it, so the events of games still being played reach a mirror
   * through the feed, all of them and once (docs/changes.md).
   */
  async firstLeftOutEvent(excluded: ReadonlySet<string>, throughSeq: number): Promise<number | undefined> {
    const games = [...excluded].map((id) => {
      const parts = id.split('_');
      return `${parts[0]}_${parts[parts.length - 1]}`;
    });
    let first: number | undefined;
    for (let i = 0; i < games.length; i += 500) {
      const c = games.slice(i, i + 500);
      const row = await this.db.bulk.kysely
        .selectFrom('events')
        .select((eb) => eb.fn.min('seq').as('seq'))
        .where('game_id', 'in', c)
        .where('tier', '=', 'confirmed')
        .where('seq', '<=', throughSeq)
        .executeTakeFirst();
      const seq = row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
      if (seq !== undefined && (first === undefined || seq < first)) first = seq;
    }
    return first;
  }

  /**
   * Highest seq of the season(s)' archive events (a sandbox replay's are never the archive's), 0
   * when there is none: a walk down the (season_id, seq) index from its top, past the replays'
   * events only, not a scan.
   */
  async head(seasonIds: readonly string[]): Promise<number> {
    let head = 0;
    for (const id of seasonIds) {
      const row = await this.db.bulk.kysely.selectFrom('events').select('seq').where('season_id', '=', id).where('owner_key_id', 'is', null).orderBy('seq', 'desc').limit(1).executeTakeFirst();
      head = Math.max(head, Number(row?.seq ?? 0));
    }
    return head;
  }

  /**
   * Real competitions of the season whose events and plays the archive may not serve (yet). A
   * sandbox replay's game is never the archive's and is not among them: its events are left out of
   * every export by the events' own query (store/event-lines.ts), so another key's replay changes
   * neither what an export holds nor whether it is served from the cache (docs/replays.md).
   */
  async excluded(s: ExportSlice): Promise<Set<string>> {
    const rows = await this.db.bulk.kysely
      .selectFrom('competitions')
      .select('id')
      .where('season_id', 'in', s.seasonIds.length ? [...s.seasonIds] : [''])
      .where('owner_key_id', 'is', null)
      .where((eb) => eb.or([eb('status', 'not in', ['final', 'cancelled']), eb('date', '>=', s.today)]))
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** The replays of this key in the season: games its own change feed brings, which its export never holds. */
  async ownReplays(s: ExportSlice, keyId: string): Promise<Set<string>> {
    const rows = await this.db.bulk.kysely
      .selectFrom('competitions')
      .select('id')
      .where('season_id', 'in', s.seasonIds.length ? [...s.seasonIds] : [''])
      .where('owner_key_id', '=', keyId)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** The next competitions of the slice whose plays are exported, in (date, id) order. */
  async competitionsAfter(s: ExportSlice, after: { date: string; id: string } | undefined, limit: number): Promise<{ id: string; date: string }[]> {
    const rows: { id: string; date: string }[] = [];
    for (const seasonId of s.seasonIds) {
      const page = await this.db.bulk.kysely
        .selectFrom('competitions')
        .select(['id', 'date'])
        .where('season_id', '=', seasonId)
        .where('status', 'in', ['final', 'cancelled'])
        .where('owner_key_id', 'is', null)
        .where('date', '<', s.toDate !== undefined && s.toDate < s.today ? s.toDate : s.today)
        .$if(s.fromDate !== undefined, (q) => q.where('date', '>=', s.fromDate ?? ''))
        .$if(after !== undefined, (q) => q.where(sql<boolean>`(date, id) > (${after?.date ?? ''}, ${after?.id ?? ''})`))
        .orderBy('date')
        .orderBy('id')
        .limit(limit)
        .execute();
      rows.push(...page);
    }
    if (s.seasonIds.length === 1) return rows;
    // Several seasons under one label: merge them into the one (date, id) order.
    return rows.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
  }

  /** Plays of one competition after `afterSeq`, in `seq` order. */
  async plays(competitionId: string, afterSeq: number, limit: number): Promise<PlayTable[]> {
    return this.db.bulk.kysely
      .selectFrom('plays')
      .selectAll()
      .where('competition_id', '=', competitionId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  /** A competition's date, season and status, to turn an `after` id into a keyset position. */
  async competitionPosition(id: string): Promise<CompetitionPosition | undefined> {
    return this.db.bulk.kysely.selectFrom('competitions').select(['id', 'date', 'league', 'season_id', 'status']).where('id', '=', id).executeTakeFirst();
  }
}
