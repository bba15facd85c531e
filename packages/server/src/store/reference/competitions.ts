import type { Competition, Competitor, Event, Play } from '@svc/schema';
import { PLAY_SCHEMA, SCORE_WITHDRAWN } from '@svc/schema';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CorrectionReader, GameOnRecord, PlayOnRecord } from '../../domain/corrections.js';
import type { ScopeFilter } from '../../domain/scopes.js';
import { coverSeason } from './reference.js';
import type { Db, Engine } from '../sql/db.js';
import { chunks } from '../sql/batches.js';
import { bool } from '../sql/columns.js';
import { competitionStatus, eventRecord } from '../events/rows.js';
import { eventJson } from '../events/json.js';
import { changeIfMoved, changeParams, insertChanges, insertChangesTx, type NewChange } from '../events/changes.js';
import { correctionReads, type EventIdParam, type EventLog, type NewEvent, type ScoreFact, type StoredEvent } from '../events/events.js';
import { dateIdKey, numberKey, pageOf, type Page, type PageRequest } from '../sql/page.js';
import { scopeClause, visibleClause } from '../sql/scope-sql.js';
import { SqlBuilder, rowNumber, rowText, rowTextOrNull } from '../sql/row-reader.js';
import type { CompetitionTable, CompetitorTable, PlayTable, SeasonTable } from './types.js';
import type { Database } from '../sql/database.js';
import { HotSql, type WriteTx } from '../sql/write-tx.js';

/** Held (PostgreSQL) while games are numbered and written, so schedulers on several nodes do not race. */
const SCHEDULE_LOCK = 727_001;

/** First in a transaction that numbers new games: the archive's schedule (store/reference/archive-load.ts) and the owner's own. */
export async function lockSchedule(k: Kysely<Database>, engine: Engine): Promise<void> {
  if (engine === 'postgres') await sql`select pg_advisory_xact_lock(${SCHEDULE_LOCK})`.execute(k);
}

/** The highest game number of a sport (0 before its first game); under the schedule lock, the next is this + 1. */
export async function lastGameNumber(k: Kysely<Database>, sport: string): Promise<number> {
  const max = await k.selectFrom('competitions').select((eb) => eb.fn.max('n').as('n')).where('sport', '=', sport).executeTakeFirst();
  return Number(max?.n ?? 0);
}

/** The dates from `from` to `to` (inclusive) on which a sport has a game. */
export async function datesWithGames(k: Kysely<Database>, sport: string, from: string, to: string): Promise<Set<string>> {
  const rows = await k.selectFrom('competitions').select('date').distinct().where('sport', '=', sport).where('date', '>=', from).where('date', '<=', to).execute();
  return new Set(rows.map((r) => r.date));
}

/** The venues these leagues have played at, by league and venue. */
export function venuesOfLeagues(k: Kysely<Database>, leagues: readonly string[]): Promise<{ league: string; venue_id: string | null }[]> {
  return k
    .selectFrom('competitions')
    .select(['league', 'venue_id'])
    .distinct()
    .where('league', 'in', [...leagues])
    .where('venue_id', 'is not', null)
    .orderBy('league')
    .orderBy('venue_id')
    .execute();
}

/** The competition rows of a bulk load (store/reference/archive-load.ts). */
export interface CompetitionRows {
  competitions: CompetitionTable[];
  competitors: CompetitorTable[];
  plays: PlayTable[];
}

/** Inside a bulk load's transaction: multi-row inserts, competitions before the rows that refer to them. */
export async function insertCompetitionRows(k: Kysely<Database>, rows: CompetitionRows): Promise<void> {
  for (const c of chunks(rows.competitions)) await k.insertInto('competitions').values(c).execute();
  for (const c of chunks(rows.competitors)) await k.insertInto('competitors').values(c).execute();
  for (const c of chunks(rows.plays)) await k.insertInto('plays').values(c).execute();
}

export async function countCompetitionRows(k: Kysely<Database>, table: 'competitions' | 'plays'): Promise<number> {
  const row = await k.selectFrom(table).select((eb) => eb.fn.countAll().as('c')).executeTakeFirst();
  return Number(row?.c ?? 0);
}

/** A new game's rows, built once its number (max(n) + 1 within the sport) is known. */
export interface ScheduledGame {
  competition: CompetitionTable;
  competitors: CompetitorTable[];
  /** Created when missing; an existing season is widened to cover the game's date. */
  season: SeasonTable;
}

export interface CompetitionFilter {
  sports?: readonly string[];
  league?: string;
  seasonIds?: readonly string[];
  date?: string;
  /**
   * A calendar day of a time zone (`date` with `tz`): competitions whose `start_time` falls in
   * [from, to); one without a start time is matched on its `date` (docs/decisions.md "Time zones").
   */
  zoneDay?: { date: string; from: string; to: string };
  team?: string;
  player?: string;
  status?: string;
  /** The archive's games only, a key's own sandbox replays left out (the export: docs/replays.md). */
  archiveOnly?: boolean;
}

/** A game of a season as standings read it (CompetitionRepo.seasonGames). */
export interface SeasonGame {
  id: string;
  sport: string;
  n: number;
  status: string;
  group: string | null;
  date: string;
  start_time: string | null;
  competitors: { entity_id: string; role: string; score: number }[];
}

type CompetitionRow = Omit<CompetitionTable, 'source_key' | 'owner_key_id' | 'original_start_time' | 'status_reason'> & {
  season_label: string;
  owner_key_id: string | null;
  original_start_time: string | null;
  status_reason: string | null;
};

/** The columns of a competition record, in the order competitionRow reads them. */
const COMPETITION_SELECT =
  'select c.id, c.sport, c.league, s.label, c.season_id, c.date, c.start_time, c.status, c.venue_id, c.name, c.synthetic, c.n, c.owner_key_id, c.group_name, c.original_start_time, c.status_reason ' +
  'from competitions c join seasons s on s.id = c.season_id';

function competitionRow(r: unknown[]): CompetitionRow {
  return {
    id: rowText(r[0]), sport: rowText(r[1]), league: rowText(r[2]), season_label: rowText(r[3]), season_id: rowText(r[4]),
    date: rowText(r[5]), start_time: rowTextOrNull(r[6]), status: rowText(r[7]), venue_id: rowTextOrNull(r[8]),
    name: rowTextOrNull(r[9]), synthetic: rowNumber(r[10]), n: rowNumber(r[11]), owner_key_id: rowTextOrNull(r[12]),
    group_name: rowTextOrNull(r[13]),
    original_start_time: rowTextOrNull(r[14]), status_reason: rowTextOrNull(r[15]),
  };
}

export const playRecord = (r: PlayTable): Play => ({
  competition_id: r.competition_id,
  seq: r.seq,
  period: { unit: r.period_unit, num: r.period_num, label: r.period_label },
  competitor_id: r.competitor_id,
  ...(r.player_id !== null ? { player_id: r.player_id } : {}),
  event_type: r.event_type,
  points: r.points,
  ...(r.clock !== null ? { clock: r.clock } : {}),
  state: JSON.parse(r.state),
  source: r.source,
  ts: r.ts,
  ...(r.event_type === SCORE_WITHDRAWN && r.withdraws != null ? { withdraws: r.withdraws } : {}),
  ...(r.event_type === SCORE_WITHDRAWN && r.event_id != null ? { retracted_id: r.event_id } : {}),
  schema: PLAY_SCHEMA,
});

const playOnRecord = (r: PlayTable): PlayOnRecord => ({
  seq: r.seq,
  competitor_id: r.competitor_id,
  player_id: r.player_id,
  event_type: r.event_type,
  points: r.points,
  period: { unit: r.period_unit, num: r.period_num, label: r.period_label },
  event_id: r.event_id ?? null,
  withdrawn_by: r.withdrawn_by ?? null,
});

/** Whether an official source covers the competition: a play other than a correction (domain/corrections.ts `coversGame`). */
async function covered(k: Kysely<Database>, competitionId: string): Promise<boolean> {
  const r = await k.selectFrom('plays').select('seq').where('competition_id', '=', competitionId).where('event_type', '<>', SCORE_WITHDRAWN).limit(1).executeTakeFirst();
  return r !== undefined;
}

/** What a correction's transaction offers its plan (docs/corrections.md). */
export interface CorrectionContext {
  status: string;
  game: GameOnRecord;
  read: CorrectionReader;
  /** The official plays not withdrawn that stand behind a confirmed event: what the final result holds for sure. */
  heldScores(): Promise<{ event_id: string; competitor_id: string; points: number }[]>;
  /** The game's confirmed scores that no correction retracted, in order. */
  standingScores(): Promise<ScoreFact[]>;
}

/** What a correction writes: its play (with the play it withdraws), the competitors' new scores, its events. */
export interface CorrectionWrite {
  play: PlayTable | null;
  withdrawnSeq: number | null;
  scores: { idx: number; score: number }[];
  events: NewEvent[];
}

/**
 * Held by a consensus write that moves the crowd's score or links a play, before its events (and
 * the change order's lock): an expression of the write's fences' `select`, so it costs no
 * statement of its own.
 */
const LOCK_COMPETITION = '(select 1 from competitions where id = ? for update)';
const LINK_PLAY = new HotSql('update plays set event_id = ? where competition_id = ? and seq = ?');
/** The crowd's own game (no official play but corrections) takes a crowd score; a covered game keeps the official record's. */
const CROWD_SCORE_SQL = 'update competitors set score = score + ? where competition_id = ? and idx = ? and not exists (select 1 from plays where competition_id = ? and event_type <> ?) returning idx';
const CROWD_SCORE = new HotSql(CROWD_SCORE_SQL);
/** The same with the competition's change row when it moved (PostgreSQL: no round trip to learn whether). */
const CROWD_SCORE_CHANGE = new HotSql(changeIfMoved(CROWD_SCORE_SQL));

/**
 * The consensus writer's part of corrections, inside its hot write (live/consensus-writer.ts):
 * a crowd confirmation scores the crowd's own game, an official confirmation links its play to
 * its event. Both take the competition's row first, as every writer of plays and scores does.
 */
export const consensusScores = {
  /** In the write's `before`: the competition's row, ahead of the event log's lock (PostgreSQL; SQLite has one writer). */
  lock(tx: WriteTx, competitionId: string): void {
    if (tx.engine === 'postgres') tx.lock(LOCK_COMPETITION, [competitionId]);
  },
  /**
   * A confirmed crowd score and, when it moved the competitor's score, the competition's change
   * row, held with the rest of the write (a hot write that holds the change order's lock): on
   * PostgreSQL one statement that needs no round trip of its own. Whether it moved is read once
   * the write is sent (after its commit).
   */
  crowdScoreAndChange(tx: WriteTx, competitionId: string, idx: number, points: number, change: NewChange): () => boolean {
    const score = [points, competitionId, idx, competitionId, SCORE_WITHDRAWN];
    if (tx.engine === 'postgres') {
      const held = tx.hold(CROWD_SCORE_CHANGE, [...score, ...changeParams(change)]);
      return () => held.rows.length > 0;
    }
    const moved = tx.hold(CROWD_SCORE, score).rows.length > 0;
    if (moved) insertChangesTx(tx, [change]);
    return () => moved;
  },
  /** A confirmed crowd score moves the competitor's score when no official source covers the game; whether it did. */
  async crowdScore(tx: WriteTx, competitionId: string, idx: number, points: number): Promise<boolean> {
    const moved = await tx.run(CROWD_SCORE, [points, competitionId, idx, competitionId, SCORE_WITHDRAWN]);
    return moved.length > 0;
  },
  /** An official scoring play's confirmed event. */
  link(tx: WriteTx, competitionId: string, seq: number, eventId: EventIdParam): void {
    tx.later(LINK_PLAY, [eventId, competitionId, seq]);
  },
};




/** A competition's row of the change feed (docs/changes.md). */
export const competitionChange = (type: 'competition.created' | 'competition.updated', c: { id: string; sport: string; league: string; owner_key_id?: string | null }, at: string): NewChange => ({
  type,
  object_id: c.id,
  sport: c.sport,
  league: c.league,
  owner_key_id: c.owner_key_id ?? null,
  at,
});

export class CompetitionRepo {
  constructor(private readonly db: Db) {}

  async list(scope: ScopeFilter, f: CompetitionFilter, page: PageRequest): Promise<Page<Competition & { n: number }>> {
    const after = dateIdKey(page.cursor);
    const b = new SqlBuilder(this.db.engine);
    const where = [scopeClause(b, scope, 'c'), visibleClause(b, scope, 'c')];
    if (f.sports !== undefined) where.push(b.oneOf('c.sport', f.sports));
    if (f.league !== undefined) where.push(`c.league = ${b.bind(f.league)}`);
    if (f.seasonIds !== undefined) where.push(b.oneOf('c.season_id', f.seasonIds));
    if (f.date !== undefined) where.push(`c.date = ${b.bind(f.date)}`);
    if (f.zoneDay !== undefined) {
      const z = f.zoneDay;
      where.push(`((c.start_time >= ${b.bind(z.from)} and c.start_time < ${b.bind(z.to)}) or (c.start_time is null and c.date = ${b.bind(z.date)}))`);
    }
    if (f.status !== undefined) where.push(`c.status = ${b.bind(f.status)}`);
    if (f.archiveOnly) where.push('c.owner_key_id is null');
    if (f.team !== undefined) where.push(`c.id in (select competition_id from competitors where entity_id = ${b.bind(f.team)})`);
    if (f.player !== undefined) {
      where.push(
        `(c.id in (select competition_id from competitors where entity_id = ${b.bind(f.player)})` +
          ` or c.id in (select competition_id from plays where player_id = ${b.bind(f.player)}))`,
      );
    }
    if (after !== undefined) where.push(`(c.date, c.id) > (${b.bind(after[0])}, ${b.bind(after[1])})`);
    const rows = (await this.db.reader.rows(b.query(`${COMPETITION_SELECT} where ${where.join(' and ')} order by c.date, c.id limit ${b.bind(page.limit + 1)}`))).map(competitionRow);
    const competitors = await this.competitorsOf(rows.slice(0, page.limit).map((r) => r.id));
    return pageOf(rows, page.limit, (r) => [r.date, r.id], (r) => ({ ...this.record(r, competitors.get(r.id) ?? []), n: r.n }));
  }

  /** One competition, with the key that owns it (a sandbox replay's game) or null: callers check it with `visibleTo`. */
  async get(id: string): Promise<(Competition & { n: number; ownerKeyId: string | null }) | undefined> {
    const b = new SqlBuilder(this.db.engine);
    const [row] = (await this.db.reader.rows(b.query(`${COMPETITION_SELECT} where c.id = ${b.bind(id)}`))).map(competitionRow);
    if (!row) return undefined;
    const competitors = await this.competitorsOf([id]);
    return { ...this.record(row, competitors.get(id) ?? []), n: row.n, ownerKeyId: row.owner_key_id };
  }

  async getByGame(sport: string, n: number): Promise<(Competition & { n: number; ownerKeyId: string | null }) | undefined> {
    const row = await this.db.kysely
      .selectFrom('competitions')
      .select('id')
      .where('sport', '=', sport)
      .where('n', '=', n)
      .executeTakeFirst();
    return row ? this.get(row.id) : undefined;
  }

  /** Competitions by id (those that exist), with their owner keys: the change feed's objects. */
  async getMany(ids: readonly string[]): Promise<Map<string, Competition & { ownerKeyId: string | null }>> {
    const out = new Map<string, Competition & { ownerKeyId: string | null }>();
    if (ids.length === 0) return out;
    const b = new SqlBuilder(this.db.engine);
    const rows = (await this.db.reader.rows(b.query(`${COMPETITION_SELECT} where ${b.oneOf('c.id', ids)}`))).map(competitionRow);
    const competitors = await this.competitorsOf(rows.map((r) => r.id));
    for (const r of rows) out.set(r.id, { ...this.record(r, competitors.get(r.id) ?? []), ownerKeyId: r.owner_key_id });
    return out;
  }

  private record(r: CompetitionRow, competitors: Competitor[]): Competition {
    return {
      id: r.id,
      sport: r.sport,
      league: r.league,
      season: r.season_label,
      season_id: r.season_id,
      date: r.date,
      start_time: r.start_time,
      status: competitionStatus(r.status),
      original_start_time: r.original_start_time,
      status_reason: r.status_reason,
      venue: r.venue_id,
      name: r.name,
      group: r.group_name ?? null,
      competitors,
      synthetic: bool(r.synthetic),
    };
  }

  private async competitorsOf(ids: string[]): Promise<Map<string, Competitor[]>> {
    const out = new Map<string, Competitor[]>();
    if (ids.length === 0) return out;
    const b = new SqlBuilder(this.db.engine);
    const text = `select competition_id, entity_type, entity_id, role, score from competitors where ${b.oneOf('competition_id', ids)} order by competition_id, idx`;
    for (const r of await this.db.reader.rows(b.query(text))) {
      const competitionId = rowText(r[0]);
      let list = out.get(competitionId);
      if (!list) out.set(competitionId, (list = []));
      list.push({ entity_type: rowText(r[1]) === 'player' ? 'player' : 'team', entity_id: rowText(r[2]), role: rowText(r[3]), score: rowNumber(r[4]) });
    }
    return out;
  }

  /** A competition's own row and its competitors in order, by competition id or by game (sport and n): what ingestion routes by. */
  async header(by: { id: string } | { sport: string; n: number }): Promise<{ competition: Pick<CompetitionTable, 'id' | 'sport' | 'league' | 'season_id' | 'date' | 'status' | 'n' | 'owner_key_id'>; competitors: CompetitorTable[] } | undefined> {
    const q = this.db.kysely.selectFrom('competitions').select(['id', 'sport', 'league', 'season_id', 'date', 'status', 'n', 'owner_key_id']);
    const competition = await ('id' in by ? q.where('id', '=', by.id) : q.where('sport', '=', by.sport).where('n', '=', by.n)).executeTakeFirst();
    if (!competition) return undefined;
    const competitors = await this.db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', competition.id).orderBy('idx').execute();
    return { competition, competitors };
  }

  /** Scheduled competitions among `ids` become live (the first report or play of a game). */
  async markLive(ids: readonly string[], nowIso: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.kysely.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('competitions')
        .set({ status: 'live' })
        .where('id', 'in', [...ids])
        .where('status', '=', 'scheduled')
        .returning(['id', 'sport', 'league', 'owner_key_id'])
        .execute();
      await insertChanges(trx, this.db.engine, moved.map((c) => competitionChange('competition.updated', c, nowIso)));
    });
  }

  /**
   * An official source moves the competition's status (docs/schedule.md), in one transaction of
   * the event log: `plan` sees the row as the transaction reads it (locked on PostgreSQL) and
   * returns the change, or null for none (the same status again: nothing is written). The
   * competition's row, its `status` event (with outbox rows and the event's change) and the
   * competition's own change commit together.
   */
  async changeStatus<C extends { status: string; start_time: string | null; original_start_time: string | null; date: string; status_reason: string | null; previous_status: string }>(
    log: EventLog,
    competitionId: string,
    plan: (row: { status: string; start_time: string | null; original_start_time: string | null; date: string; status_reason: string | null }) => C | null,
    nowIso: string,
  ): Promise<{ change: C | null; stored: StoredEvent[] }> {
    let change: C | null = null;
    let head: { id: string; sport: string; league: string; owner_key_id: string | null } | undefined;
    const stored = await log.append(
      async (tx) => {
        const row = await (await tx.builder())
          .selectFrom('competitions')
          .select(['id', 'sport', 'league', 'season_id', 'n', 'status', 'start_time', 'original_start_time', 'date', 'owner_key_id', 'status_reason'])
          .where('id', '=', competitionId)
          .$if(this.db.engine === 'postgres', (q) => q.forUpdate())
          .executeTakeFirstOrThrow();
        change = plan({ status: row.status, start_time: row.start_time, original_start_time: row.original_start_time ?? null, date: row.date, status_reason: row.status_reason ?? null });
        if (!change) return [];
        head = { id: row.id, sport: row.sport, league: row.league, owner_key_id: row.owner_key_id ?? null };
        await (await tx.builder())
          .updateTable('competitions')
          .set({ status: change.status, start_time: change.start_time, original_start_time: change.original_start_time, date: change.date, status_reason: change.status_reason })
          .where('id', '=', competitionId)
          .execute();
        return [
          {
            type: 'status', tier: 'confirmed', game_id: `${row.sport}_${row.n}`, competition_id: row.id, sport: row.sport, league: row.league, season_id: row.season_id,
            team: '', event_type: 'status', points: 0, clock: null, ts: nowIso, agreement: 1, reporters: 0, latency_ms: 0, probability: 1, provisional_id: null, retracted_id: null,
            owner_key_id: row.owner_key_id ?? null, status: change.status, previous_status: change.previous_status, start_time: change.start_time, reason: change.status_reason,
          },
        ];
      },
      {
        within: async (tx) => {
          if (head) await insertChangesTx(tx, [competitionChange('competition.updated', head, nowIso)]);
        },
      },
    );
    return { change, stored };
  }

  /**
   * A correction (docs/corrections.md) in one transaction of the event log: `plan` sees the
   * competition as the transaction reads it (its row locked first on PostgreSQL, as every writer
   * of its plays and scores does, so corrections and plays of one competition never interleave)
   * and returns what to write; it may throw to refuse, and nothing is written. The correction's
   * play, the mark on the play it withdraws, the competitors' scores, the competition's change
   * and the events (with their outbox rows and changes) commit together. `viewerKeyId`: events of
   * another key's sandbox replay are not there for the plan.
   */
  async correct<W extends CorrectionWrite>(log: EventLog, competitionId: string, gameId: string, viewerKeyId: string | null, plan: (ctx: CorrectionContext) => Promise<W>): Promise<{ write: W; stored: StoredEvent[] }> {
    let write: W | undefined;
    const stored = await log.append(async (tx) => {
      const k = await tx.builder();
      const head = await k
        .selectFrom('competitions')
        .select(['id', 'status', 'sport', 'league', 'owner_key_id'])
        .where('id', '=', competitionId)
        .$if(this.db.engine === 'postgres', (q) => q.forUpdate())
        .executeTakeFirstOrThrow();
      const competitors = await k.selectFrom('competitors').selectAll().where('competition_id', '=', competitionId).orderBy('idx').execute();
      const last = await k.selectFrom('plays').select(['seq', 'state']).where('competition_id', '=', competitionId).orderBy('seq', 'desc').limit(1).executeTakeFirst();
      const isCovered = last !== undefined && (await covered(k, competitionId));
      const state: Record<string, number> = isCovered && last ? JSON.parse(last.state) : Object.fromEntries(competitors.map((c) => [c.role, 0]));
      const visible = (e: ScoreFact | undefined) => (e && (e.owner_key_id === null || e.owner_key_id === viewerKeyId) ? e : undefined);
      const ctx: CorrectionContext = {
        status: head.status,
        game: { sport: head.sport, competitors, covered: isCovered, state, lastSeq: last?.seq ?? 0 },
        read: {
          play: async (seq) => {
            const r = await k.selectFrom('plays').selectAll().where('competition_id', '=', competitionId).where('seq', '=', seq).executeTakeFirst();
            return r && playOnRecord(r);
          },
          playOfEvent: async (eventId) => {
            const r = await k.selectFrom('plays').selectAll().where('competition_id', '=', competitionId).where('event_id', '=', eventId).where('withdrawn_by', 'is', null).where('event_type', '<>', SCORE_WITHDRAWN).executeTakeFirst();
            return r && playOnRecord(r);
          },
          event: async (id) => visible(await correctionReads.event(k, id)),
          confirmationOf: async (id) => correctionReads.confirmationOf(k, gameId, id),
          retracted: async (id) => correctionReads.corrected(k, gameId, id),
        },
        heldScores: async () => {
          const rows = await k
            .selectFrom('plays')
            .select(['event_id', 'competitor_id', 'points'])
            .where('competition_id', '=', competitionId)
            .where('event_id', 'is not', null)
            .where('withdrawn_by', 'is', null)
            .where('event_type', '<>', SCORE_WITHDRAWN)
            .where('points', '>', 0)
            .execute();
          return rows.flatMap((r) => (r.event_id ? [{ event_id: r.event_id, competitor_id: r.competitor_id, points: r.points }] : []));
        },
        standingScores: async () => correctionReads.standingScores(k, gameId),
      };
      write = await plan(ctx);
      const w = write;
      if (w.play) await k.insertInto('plays').values(w.play).execute();
      if (w.play && w.withdrawnSeq !== null) {
        await k.updateTable('plays').set({ withdrawn_by: w.play.seq }).where('competition_id', '=', competitionId).where('seq', '=', w.withdrawnSeq).execute();
      }
      for (const { idx, score } of w.scores) {
        await k.updateTable('competitors').set({ score }).where('competition_id', '=', competitionId).where('idx', '=', idx).execute();
      }
      // A play or a score moved: the competition's change (docs/changes.md).
      if (w.play || w.scores.length > 0) await insertChanges(k, this.db.engine, [competitionChange('competition.updated', head, w.play?.ts ?? new Date().toISOString())]);
      return w.events;
    });
    if (!write) throw new Error(`the correction of ${competitionId} planned nothing`);
    return { write, stored };
  }

  /**
   * Appends official plays in one transaction: `build` sees the competition's status, its
   * competitors and the last play as they are inside it and returns the rows, the competitors'
   * new scores and the new status (it may throw to refuse the batch, and nothing is written).
   * Appends to one competition are serialised (on PostgreSQL the competition's row is locked
   * first), so no two batches number their plays from the same last play and none can land after
   * a final play another batch wrote meanwhile: the status `build` sees is the one it replaces.
   */
  async appendPlays<T extends { rows: PlayTable[]; scores: { idx: number; score: number }[]; status: string }>(
    competitionId: string,
    build: (status: string, competitors: CompetitorTable[], last: { seq: number; state: string } | undefined, covered: boolean) => T,
  ): Promise<T> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const competition = await trx
        .selectFrom('competitions')
        .select(['id', 'status', 'sport', 'league', 'owner_key_id'])
        .where('id', '=', competitionId)
        .$if(this.db.engine === 'postgres', (q) => q.forUpdate())
        .executeTakeFirstOrThrow();
      const competitors = await trx.selectFrom('competitors').selectAll().where('competition_id', '=', competitionId).orderBy('idx').execute();
      const last = await trx.selectFrom('plays').select(['seq', 'state']).where('competition_id', '=', competitionId).orderBy('seq', 'desc').limit(1).executeTakeFirst();
      const out = build(competition.status, competitors, last, last !== undefined && (await covered(trx, competitionId)));
      if (out.rows.length) await trx.insertInto('plays').values(out.rows).execute();
      for (const { idx, score } of out.scores) {
        await trx.updateTable('competitors').set({ score }).where('competition_id', '=', competitionId).where('idx', '=', idx).execute();
      }
      await trx.updateTable('competitions').set({ status: out.status }).where('id', '=', competitionId).execute();
      // Its score or status moved: a change of the feed (docs/changes.md).
      if (out.rows.length > 0 || out.status !== competition.status) {
        const at = out.rows[out.rows.length - 1]?.ts ?? new Date().toISOString();
        await insertChanges(trx, this.db.engine, [competitionChange('competition.updated', competition, at)]);
      }
      return out;
    });
  }

  /** How many competitions are live now, by sport (sports with none are absent). */
  async liveCountBySport(): Promise<Map<string, number>> {
    const rows = await this.db.kysely
      .selectFrom('competitions')
      .select(['sport', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'live')
      .where('owner_key_id', 'is', null)
      .groupBy('sport')
      .execute();
    return new Map(rows.map((r) => [r.sport, Number(r.n)]));
  }

  async plays(competitionId: string, page: PageRequest): Promise<Page<Play>> {
    const after = numberKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('plays')
      .selectAll()
      .where('competition_id', '=', competitionId)
      .$if(after !== undefined, (q) => q.where('seq', '>', after ?? 0))
      .orderBy('seq')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.seq], playRecord);
  }

  /**
   * `confirmedEvents` as the answer's JSON, made of each event's stored JSON (store/events/json.ts):
   * the same bytes as the export's lines, whatever the event's kind, and no serializer choosing
   * between the kinds of the Event union per item.
   */
  async confirmedEventsJson(gameId: string, page: PageRequest, types: readonly string[] | null = null): Promise<string> {
    const after = numberKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('events')
      .select(['seq', 'json_tail'])
      .where('game_id', '=', gameId)
      .where('tier', '=', 'confirmed')
      .$if(types !== null, (q) => q.where('type', 'in', types?.length ? [...types] : ['']))
      .$if(after !== undefined, (q) => q.where('seq', '>', after ?? 0))
      .orderBy('seq')
      .limit(page.limit + 1)
      .execute();
    const { data, next_cursor } = pageOf(rows, page.limit, (r) => [Number(r.seq)], (r) => eventJson(Number(r.seq), r.json_tail));
    return `{"data":[${data.join(',')}],"next_cursor":${JSON.stringify(next_cursor)}}`;
  }

  async confirmedEvents(gameId: string, page: PageRequest, types: readonly string[] | null = null): Promise<Page<Event>> {
    const after = numberKey(page.cursor);
    const rows = await this.db.kysely
      .selectFrom('events')
      .selectAll()
      .where('game_id', '=', gameId)
      .where('tier', '=', 'confirmed')
      .$if(types !== null, (q) => q.where('type', 'in', types?.length ? [...types] : ['']))
      .$if(after !== undefined, (q) => q.where('seq', '>', after ?? 0))
      .orderBy('seq')
      .limit(page.limit + 1)
      .execute();
    return pageOf(rows, page.limit, (r) => [r.seq], eventRecord);
  }

  /** A sport's `scheduled` games on a date, earliest start first (no start time last, then by number). */
  async scheduledOn(sport: string, date: string): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('competitions')
      .select(['id', 'n', 'start_time'])
      .where('sport', '=', sport)
      .where('date', '=', date)
      .where('status', '=', 'scheduled')
      // A sandbox replay's game is driven by its replay, never by the simulator (docs/replays.md).
      .where('owner_key_id', 'is', null)
      .execute();
    // Sorted here, not in SQL: the engines disagree on where NULL start times go.
    return rows.sort((a, b) => (a.start_time ?? '~').localeCompare(b.start_time ?? '~') || a.n - b.n).map((r) => r.id);
  }

  /** The teams and players competing in a sport's games on a date. */
  async competingOn(sport: string, date: string): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('competitors as p')
      .innerJoin('competitions as c', 'c.id', 'p.competition_id')
      .select('p.entity_id')
      .where('c.sport', '=', sport)
      .where('c.date', '=', date)
      .execute();
    return rows.map((r) => r.entity_id);
  }

  /**
   * Writes a new game numbered max(n) + 1 within its sport, with its competitors and season, in
   * one transaction. The archive's schedule numbers games under the same lock. Returns its id.
   */
  async scheduleGame(sport: string, build: (n: number) => ScheduledGame): Promise<string> {
    return this.db.kysely.transaction().execute(async (trx) => {
      await lockSchedule(trx, this.db.engine);
      const game = build((await lastGameNumber(trx, sport)) + 1);
      await trx.insertInto('competitions').values(game.competition).execute();
      await trx.insertInto('competitors').values(game.competitors).execute();
      await coverSeason(trx, game.season, game.competition.date);
      await insertChanges(trx, this.db.engine, [competitionChange('competition.created', game.competition, new Date().toISOString())]);
      return game.competition.id;
    });
  }

  /**
   * A sandbox replay's game (docs/replays.md): numbered max(n) + 1 within its sport under the lock
   * every new game is numbered under, in an existing season that is left as it is. `within` runs in
   * the same transaction after the rows (the replay's own row and its limit check): when it throws,
   * nothing is stored.
   */
  async createOwnedGame(
    sport: string,
    build: (n: number) => { competition: CompetitionTable; competitors: CompetitorTable[] },
    within: (trx: Transaction<Database>, game: { competitionId: string; n: number }) => Promise<void>,
  ): Promise<{ competitionId: string; n: number }> {
    return this.db.kysely.transaction().execute(async (trx) => {
      await lockSchedule(trx, this.db.engine);
      const n = (await lastGameNumber(trx, sport)) + 1;
      const game = build(n);
      await trx.insertInto('competitions').values(game.competition).execute();
      await trx.insertInto('competitors').values(game.competitors).execute();
      await insertChanges(trx, this.db.engine, [competitionChange('competition.created', game.competition, new Date().toISOString())]);
      const created = { competitionId: game.competition.id, n };
      await within(trx, created);
      return created;
    });
  }

  /**
   * Live games of these sports with at least one play whose `source` starts with
   * `sourcePrefix` (taken literally, no wildcards), each with its home competitor.
   */
  async liveWithPlaysFrom(sports: readonly string[], sourcePrefix: string): Promise<{ competitionId: string; home: string }[]> {
    const pattern = `${sourcePrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.db.kysely
      .selectFrom('competitions as c')
      .innerJoin('competitors as k', (j) => j.onRef('k.competition_id', '=', 'c.id').on('k.role', '=', 'home'))
      .select(['c.id', 'k.entity_id'])
      .where('c.status', '=', 'live')
      .where('c.sport', 'in', [...sports])
      .where((eb) =>
        eb.exists(eb.selectFrom('plays as p').select('p.seq').whereRef('p.competition_id', '=', 'c.id').where(sql<boolean>`p.source like ${pattern} escape '\\'`)),
      )
      .execute();
    return rows.map((r) => ({ competitionId: r.id, home: r.entity_id }));
  }

  /** A league's final games with at least one scoring play, by number. */
  async finalsWithScoring(league: string): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('competitions as c')
      .select('c.id')
      .where('c.league', '=', league)
      .where('c.status', '=', 'final')
      .where((eb) => eb.exists(eb.selectFrom('plays as p').select('p.seq').whereRef('p.competition_id', '=', 'c.id').where('p.points', '>', 0)))
      .orderBy('c.n')
      .execute();
    return rows.map((r) => r.id);
  }

  /** The highest game number of a sport (0 before its first game). */
  async lastGameNumber(sport: string): Promise<number> {
    return lastGameNumber(this.db.kysely, sport);
  }

  /** A competition's identity as stored, without its season or competitors. */
  async row(id: string): Promise<Pick<CompetitionTable, 'id' | 'sport' | 'n' | 'date'> | undefined> {
    return this.db.kysely.selectFrom('competitions').select(['id', 'sport', 'n', 'date']).where('id', '=', id).executeTakeFirst();
  }

  /** A competition's competitor rows, by position. */
  async competitorRows(competitionId: string): Promise<CompetitorTable[]> {
    return this.db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', competitionId).orderBy('idx').execute();
  }

  /** Every play of a competition as stored, in order. */
  async allPlays(competitionId: string): Promise<PlayTable[]> {
    return this.db.kysely.selectFrom('plays').selectAll().where('competition_id', '=', competitionId).orderBy('seq').execute();
  }

  /**
   * Every real game of these seasons (sandbox replays' games left out) with its group and its
   * competitors' stored scores, by date then id: what standings read (docs/standings.md).
   */
  async seasonGames(seasonIds: readonly string[]): Promise<SeasonGame[]> {
    if (seasonIds.length === 0) return [];
    const b = new SqlBuilder(this.db.engine);
    const text =
      'select c.id, c.sport, c.n, c.status, c.group_name, c.date, c.start_time, k.entity_id, k.role, k.score ' +
      `from competitions c join competitors k on k.competition_id = c.id where ${b.oneOf('c.season_id', seasonIds)} and c.owner_key_id is null ` +
      'order by c.date, c.id, k.idx';
    const out: SeasonGame[] = [];
    let last: SeasonGame | undefined;
    for (const r of await this.db.reader.rows(b.query(text))) {
      const id = rowText(r[0]);
      if (!last || last.id !== id) {
        last = { id, sport: rowText(r[1]), n: rowNumber(r[2]), status: rowText(r[3]), group: rowTextOrNull(r[4]), date: rowText(r[5]), start_time: rowTextOrNull(r[6]), competitors: [] };
        out.push(last);
      }
      last.competitors.push({ entity_id: rowText(r[7]), role: rowText(r[8]), score: rowNumber(r[9]) });
    }
    return out;
  }

  /** The plays with a player of these seasons' real games, in (date, game, seq) order: what leaders read. */
  async seasonPlayerPlays(seasonIds: readonly string[]): Promise<(PlayTable & { date: string })[]> {
    if (seasonIds.length === 0) return [];
    return this.db.kysely
      .selectFrom('plays as p')
      .innerJoin('competitions as c', 'c.id', 'p.competition_id')
      .selectAll('p')
      .select('c.date')
      .where('c.season_id', 'in', [...seasonIds])
      .where('c.owner_key_id', 'is', null)
      .where('p.player_id', 'is not', null)
      .orderBy('c.date')
      .orderBy('p.competition_id')
      .orderBy('p.seq')
      .execute();
  }

  /** Every play of one player in real games, with its game's league, season and date, in (date, game, seq) order. */
  async playerPlays(playerId: string): Promise<(PlayTable & { date: string; league: string; season_id: string; season_label: string })[]> {
    return this.db.kysely
      .selectFrom('plays as p')
      .innerJoin('competitions as c', 'c.id', 'p.competition_id')
      .innerJoin('seasons as s', 's.id', 'c.season_id')
      .selectAll('p')
      .select(['c.date', 'c.league', 'c.season_id', 's.label as season_label'])
      .where('p.player_id', '=', playerId)
      .where('c.owner_key_id', 'is', null)
      .orderBy('c.date')
      .orderBy('p.competition_id')
      .orderBy('p.seq')
      .execute();
  }

  /** The competitors of these competitions, by competition, in order. */
  async competitorsOfMany(ids: readonly string[]): Promise<Map<string, Competitor[]>> {
    const out = new Map<string, Competitor[]>();
    for (let i = 0; i < ids.length; i += 500) for (const [k, v] of await this.competitorsOf(ids.slice(i, i + 500))) out.set(k, v);
    return out;
  }

  /** The newest play time among these competitions, or null when they have none. */
  async newestPlayTs(ids: readonly string[]): Promise<string | null> {
    let newest: string | null = null;
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const row = await this.db.kysely.selectFrom('plays').select((eb) => eb.fn.max('ts').as('ts')).where('competition_id', 'in', [...part]).executeTakeFirst();
      const ts = row?.ts ?? null;
      if (ts !== null && (newest === null || ts > newest)) newest = ts;
    }
    return newest;
  }
}
