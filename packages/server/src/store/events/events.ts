import type { Event } from '@svc/schema';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Db } from '../sql/db.js';
import { eventId, eventSeq, ID_PREFIX } from '@svc/schema';
import { chunks } from '../sql/batches.js';
import { changeClause, changeClauseParams, insertChangesTx, lockChangeOrderTx, type HotChange } from './changes.js';
import { eventRecord, eventRowOf } from './rows.js';
import { eventRowOfFields, storedEventRow, type EventFields } from './json.js';
import { rowNumber } from '../sql/row-reader.js';
import type { Database } from '../sql/database.js';
import type { EventTable } from './types.js';
import { HotSql, placeholders, SqlExpr, writeTransaction, type EveryColumn, type HeldRows, type HotParam, type Row, type WriteTx } from '../sql/write-tx.js';

function onlyRow(h: HeldRows): Row {
  const [r] = h.rows;
  if (!r) throw new Error('insert into events returned no row');
  return r;
}

/** An event's id as a write stores it: known, or given by the database in the same write (`eventIdAt`). */
export type EventIdParam = string | SqlExpr;

export type NewEvent = EventFields & {
  /** Index of an earlier row of the same append whose id becomes this row's provisional_id. */
  provisionalIndex?: number;
};

/** A stored event with what the stream needs to route it without another lookup. */
export interface StoredEvent {
  seq: number;
  competitionId: string;
  seasonId: string;
  /** The game's sport and league, for routing whatever the event's type (a status event names no league). */
  sport: string;
  league: string;
  /** The key that alone may see the event (a sandbox replay's), null for everyone: docs/replays.md. */
  ownerKeyId: string | null;
  event: Event;
  /**
   * Whether its append wrote webhook deliveries for it (the outbox): false, and no worker need
   * claim anything for it. Absent where nobody knows (an event read back from the store, or
   * published by a node from before the field).
   */
  webhooks?: boolean;
}

/**
 * An event of an append, inside its transaction: its fields, and how later statements of the same
 * write name it, its seq and its id, known or (on PostgreSQL) the database's until the commit.
 */
export interface AppendedEvent {
  fields: EventFields;
  seq: number | SqlExpr;
  id: EventIdParam;
  /** Set by the outbox when it writes deliveries for the event (StoredEvent.webhooks). */
  webhooks: boolean;
}

/** The events of an append, inside its transaction, in order. */
export interface Appended {
  events: readonly AppendedEvent[];
}

/** Runs inside the append transaction: the webhook outbox writes its rows here. */
export type OutboxHook = (tx: WriteTx, events: Appended) => Promise<void>;

const INSERTED = ['type', 'tier', 'game_id', 'competition_id', 'sport', 'league', 'season_id', 'team', 'event_type', 'points', 'clock', 'ts', 'agreement', 'reporters', 'latency_ms', 'probability', 'provisional_id', 'retracted_id', 'json_tail', 'owner_key_id', 'status', 'previous_status', 'start_time', 'reason'] as const;
const _everyEventColumn: EveryColumn<EventTable, typeof INSERTED, 'seq'> = INSERTED;
const RETURNED = INSERTED.filter((c) => c !== 'json_tail');
/**
 * The insert answers the seq alone: the rest of the stored row is what the append wrote
 * (`eventRowOfFields`), and every column more was a field for the driver to describe and parse
 * on every report (bench/history/2026-12-07.md).
 */
const INSERT_EVENT = new HotSql(`insert into events (${INSERTED.join(', ')}) values (${placeholders(INSERTED.length)}) returning seq`);
/**
 * PostgreSQL: the same insert, which also notes the new seq in a setting of the transaction (the
 * last parameter names it), so later statements of the same message can name the event
 * (`eventIdAt`, `eventSeqAt`) before the database has answered.
 */
const INSERT_EVENT_NOTED = new HotSql(
  `with e as (insert into events (${INSERTED.join(', ')}) values (${placeholders(INSERTED.length)}) returning seq), ` +
    // Its change-feed row in the same statement, one statement fewer a report (docs/changes.md).
    `${changeClause('c', 'e', `('${ID_PREFIX.event}' || repeat('0', greatest(0, 12 - length(e.seq::text))) || e.seq::text)`)} ` +
    `select set_config(?, e.seq::text, true) as noted, e.seq from e`,
);
const slotOf = (k: number): string => `svc.event_${k}`;
/** The seq of the append's k-th event, in SQL: the one INSERT_EVENT_NOTED noted. */
const eventSeqAt = (k: number): SqlExpr => new SqlExpr(`current_setting('${slotOf(k)}')::bigint`);
/** The id of the append's k-th event, in SQL: eventId() of the seq INSERT_EVENT_NOTED noted. */
const eventIdAt = (k: number): SqlExpr => {
  const seq = `current_setting('${slotOf(k)}')`;
  return new SqlExpr(`('${ID_PREFIX.event}' || repeat('0', greatest(0, 12 - length(${seq}))) || ${seq})`);
};
// On PostgreSQL, concurrent appenders would commit out of sequence order and a resume reading
// "after N" could skip a late-committing lower seq; one lock keeps them in order. It is also the
// change feed's order lock (store/events/changes.ts), as every event is a change.

const eventChangeOf = (f: EventFields): Omit<HotChange, 'object_id'> => ({ type: 'event.created', sport: f.sport, league: f.league, owner_key_id: f.owner_key_id ?? null, at: f.ts });
const eventChange = (f: EventFields, id: EventIdParam): HotChange => ({ ...eventChangeOf(f), object_id: id });

/** An event of an append as stored: the row it wrote, with the seq the database gave it. */
function storedOf(i: Inserted): StoredEvent {
  const seq = rowNumber(onlyRow(i.rows).seq);
  const f = i.fields;
  return { seq, competitionId: f.competition_id, seasonId: f.season_id, sport: f.sport, league: f.league, ownerKeyId: f.owner_key_id ?? null, event: eventRecord(eventRowOfFields(f, seq)), webhooks: i.webhooks };
}

/** An event of an append: its row as written, its seq and id, known or the database's until the commit. */
interface Inserted extends AppendedEvent {
  rows: HeldRows;
}

/**
 * Inside a bulk load's transaction (store/reference/archive-load.ts), events already in their final order:
 * multi-row inserts, each row with the stored JSON an append writes. Unlike `append` it takes no
 * sequence lock and writes no outbox rows: a bulk load is history imported before a node serves
 * (or a benchmark's league), not news for streams or webhooks.
 */
export async function insertEventRows(k: Kysely<Database>, events: readonly EventFields[]): Promise<void> {
  for (const c of chunks(events)) await k.insertInto('events').values(c.map(storedEventRow)).execute();
}

export async function countEvents(k: Kysely<Database>): Promise<number> {
  const row = await k.selectFrom('events').select((eb) => eb.fn.countAll().as('c')).executeTakeFirst();
  return Number(row?.c ?? 0);
}

/**
 * The append-only event log with its global sequence. Events and their outbox rows commit
 * together, so a confirmed event can never exist without its webhook deliveries.
 */
/** What a resume reads of the log (EventLog.after): each field narrows, all together. */
export interface EventFilter {
  sports?: readonly string[] | null;
  leagues?: readonly string[] | null;
  games?: readonly string[] | null;
  tier?: string | null;
  /** Only events of these types (null: all). */
  types?: readonly string[] | null;
  /** Only events this key may see: real games' and its own replays' (docs/replays.md). */
  viewerKeyId?: string;
  /** Only events whose probability reaches this, retractions' reaching `retractionFloor` (stream/filter.ts `probableEnough`). */
  minProbability?: number;
  retractionFloor?: number;
  /**
   * Leaves out the events of competitions settled (final or cancelled) before this date: what
   * only the `archive` product reads (docs/stream.md "Resume").
   */
  settledBefore?: string;
  /** Only events with a seq below this one. */
  below?: number;
  /** A bulk read (a stream resume): on the bulk pool, beside exports (store/sql/db.ts `bulk`). */
  bulk?: boolean;
  anyOf?: { sports: readonly string[]; leagues: readonly string[]; games: readonly string[] };
}

export class EventLog {
  private hooks: OutboxHook[] = [];
  private committed: ((stored: readonly StoredEvent[]) => void)[] = [];
  constructor(private readonly db: Db) {}

  /** Runs after an append committed (caches that must not outlive the old state). */
  afterAppend(listener: (stored: readonly StoredEvent[]) => void): void {
    this.committed.push(listener);
  }

  onAppend(hook: OutboxHook): void {
    this.hooks.push(hook);
  }

  /**
   * `before` runs first in the transaction (a fence that may refuse the write), `within` after the
   * rows (writes that must commit with them), given each event's id; with either, the transaction
   * runs even without rows. The append is the write of every report, so its own statements are
   * hot writes (WriteTx): on PostgreSQL the events go with the fences before them and the rows
   * after them, COMMIT included, in one round trip, the ids standing as SQL until then
   * (docs/architecture.md "Hot writes").
   */
  async append(
    rowsOrBuild: NewEvent[] | ((tx: WriteTx) => Promise<NewEvent[]>),
    opts: { before?: (tx: WriteTx) => Promise<void>; within?: (tx: WriteTx, ids: readonly EventIdParam[]) => Promise<void> } = {},
  ): Promise<StoredEvent[]> {
    if (Array.isArray(rowsOrBuild) && rowsOrBuild.length === 0 && !opts.before && !opts.within) return [];
    const inserted = await writeTransaction(this.db, async (tx) => {
      await opts.before?.(tx);
      // `build` runs in the transaction: its rows may depend on what it reads and writes there.
      const rows = Array.isArray(rowsOrBuild) ? rowsOrBuild : await rowsOrBuild(tx);
      if (rows.length > 0) lockChangeOrderTx(tx);
      // An event whose id a later row of the append stores in its JSON is asked for at once.
      const named = new Set(rows.flatMap((r) => (r.provisionalIndex === undefined ? [] : [r.provisionalIndex])));
      const inserted: Inserted[] = [];
      for (const [k, { provisionalIndex, ...fields }] of rows.entries()) {
        const earlier = provisionalIndex === undefined ? undefined : inserted[provisionalIndex]?.id;
        if (typeof earlier === 'string') fields.provisional_id = earlier;
        const row = storedEventRow(fields);
        const params: HotParam[] = INSERTED.map((c) => row[c] ?? null);
        const held = tx.engine === 'postgres' ? tx.hold(INSERT_EVENT_NOTED, [...params, ...changeClauseParams(eventChangeOf(row)), slotOf(k)]) : tx.hold(INSERT_EVENT, params);
        if (named.has(k)) await tx.flush();
        const seq = held.ready ? rowNumber(onlyRow(held).seq) : null;
        inserted.push({ fields: row, rows: held, seq: seq ?? eventSeqAt(k), id: seq !== null ? eventId(seq) : eventIdAt(k), webhooks: false });
      }
      // Every event is a change of the feed (docs/changes.md), in the event's own transaction (on
      // PostgreSQL in the event's own statement).
      if (tx.engine !== 'postgres') insertChangesTx(tx, inserted.map((i) => eventChange(i.fields, i.id)));
      if (inserted.length > 0) for (const hook of this.hooks) await hook(tx, { events: inserted });
      await opts.within?.(tx, inserted.map((i) => i.id));
      return inserted;
    });
    // The commit carried whatever was held: every event's seq is back.
    const stored = inserted.map(storedOf);
    if (stored.length > 0) for (const listener of this.committed) listener(stored);
    return stored;
  }

  /**
   * Events after `seq` in order, for stream resume; `limit` caps the read. `sports`, `leagues`,
   * `games` and `tier` each narrow (AND); `anyOf` is a stream subscription: an event matches when
   * its sport, league or game is in one of its lists (a union), and an empty union matches nothing.
   */
  async after(seq: number, limit: number, filter: EventFilter): Promise<StoredEvent[]> {
    const rows = await this.filtered(seq, limit, filter)
      // Every column but the stored JSON, which the record is not built from.
      .select(['seq', ...RETURNED])
      .execute();
    return rows.map((r) => ({ seq: r.seq, competitionId: r.competition_id, seasonId: r.season_id, sport: r.sport, league: r.league, ownerKeyId: r.owner_key_id, event: eventRecord(r) }));
  }

  /** The seqs `after` would read, without the rows: what a resume counts before it sends anything. */
  async seqsAfter(seq: number, limit: number, filter: EventFilter): Promise<number[]> {
    const rows = await this.filtered(seq, limit, filter).select('seq').execute();
    return rows.map((r) => Number(r.seq));
  }

  private filtered(seq: number, limit: number, filter: EventFilter) {
    const anyOf = filter.anyOf;
    const settledBefore = filter.settledBefore;
    return (
      (filter.bulk ? this.db.bulk.kysely : this.db.kysely)
        .selectFrom('events')
        .where('seq', '>', seq)
        .$if(filter.below !== undefined, (q) => q.where('seq', '<', filter.below ?? 0))
        .$if(!!filter.sports, (q) => q.where('sport', 'in', filter.sports?.length ? [...filter.sports] : ['']))
        .$if(!!filter.leagues, (q) => q.where('league', 'in', filter.leagues?.length ? [...filter.leagues] : ['']))
        .$if(!!filter.games, (q) => q.where('game_id', 'in', filter.games?.length ? [...filter.games] : ['']))
        .$if(!!filter.tier, (q) => q.where('tier', '=', filter.tier ?? ''))
        .$if(!!filter.types, (q) => q.where('type', 'in', filter.types?.length ? [...filter.types] : ['']))
        .$if((filter.minProbability ?? 0) > 0, (q) =>
          q.where((eb) =>
            eb.or([
              eb.and([eb('type', '=', 'score_retracted'), eb('probability', '>=', filter.retractionFloor ?? filter.minProbability ?? 0)]),
              eb.and([eb('type', '!=', 'score_retracted'), eb('probability', '>=', filter.minProbability ?? 0)]),
            ]),
          ),
        )
        .$if(filter.viewerKeyId !== undefined, (q) => q.where((eb) => eb.or([eb('owner_key_id', 'is', null), eb('owner_key_id', '=', filter.viewerKeyId ?? '')])))
        // The archive's rule (domain/access.ts `eligibility`): settled, final or cancelled, before today.
        .$if(settledBefore !== undefined, (q) =>
          q.where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('competitions as c')
                  .select('c.id')
                  .whereRef('c.id', '=', 'events.competition_id')
                  .where('c.status', 'in', ['final', 'cancelled'])
                  .where('c.date', '<', settledBefore ?? ''),
              ),
            ),
          ),
        )
        .$if(!!anyOf, (q) =>
          q.where((eb) =>
            eb.or([
              ...(anyOf?.sports.length ? [eb('sport', 'in', [...anyOf.sports])] : []),
              ...(anyOf?.leagues.length ? [eb('league', 'in', [...anyOf.leagues])] : []),
              ...(anyOf?.games.length ? [eb('game_id', 'in', [...anyOf.games])] : []),
            ]),
          ),
        )
        .orderBy('seq')
        .limit(limit)
    );
  }

  /** The highest seq in the log (0 when empty). */
  async lastSeq(): Promise<number> {
    const r = await this.db.kysely.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
    return Number(r?.seq ?? 0);
  }

  async get(id: string): Promise<StoredEvent | undefined> {
    const seq = eventSeq(id);
    if (seq === undefined) return undefined;
    const r = await this.db.kysely.selectFrom('events').selectAll().where('seq', '=', seq).executeTakeFirst();
    return r && { seq: r.seq, competitionId: r.competition_id, seasonId: r.season_id, sport: r.sport, league: r.league, ownerKeyId: r.owner_key_id, event: eventRecord(r) };
  }

  /** The game's confirmed scores that no correction retracted, in order (docs/corrections.md). */
  async standingScores(gameId: string): Promise<ScoreFact[]> {
    return correctionReads.standingScores(this.db.kysely, gameId);
  }

  /** The score, confirmation and retraction events of these games, in order: a live game's current score in a tier. */
  async scoringFacts(gameIds: readonly string[]): Promise<{ game_id: string; id: string; type: string; tier: string; team: string; points: number; provisional_id: string | null; retracted_id: string | null; ts: string }[]> {
    if (gameIds.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('events')
      .select(['seq', 'game_id', 'type', 'tier', 'team', 'points', 'provisional_id', 'retracted_id', 'ts'])
      .where('game_id', 'in', [...gameIds])
      .where('owner_key_id', 'is', null)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ game_id: r.game_id, id: eventId(Number(r.seq)), type: r.type, tier: r.tier, team: r.team, points: r.points, provisional_id: r.provisional_id, retracted_id: r.retracted_id, ts: r.ts }));
  }
}

/**
 * Events by sequence number, in no particular order (the webhook dispatcher's bodies). The list
 * travels as one parameter, so the text is the same for any number of events: one prepared
 * statement, and no query built per claim (docs/architecture.md "Hot reads").
 */
const EVENTS_BY_SEQ = {
  sqlite: `select seq, ${RETURNED.join(', ')} from events where seq in (select value from json_each(?))`,
  postgres: `select seq, ${RETURNED.join(', ')} from events where seq = any($1::bigint[])`,
};

export async function eventsBySeq(db: Db, seqs: readonly number[]): Promise<{ seq: number; competitionId: string; event: Event }[]> {
  if (seqs.length === 0) return [];
  const list = db.engine === 'postgres' ? [...seqs] : JSON.stringify(seqs);
  const { rows } = await db.kysely.executeQuery<Row>(CompiledQuery.raw(EVENTS_BY_SEQ[db.engine], [list]));
  return rows.map((r) => {
    const row = eventRowOf(r);
    return { seq: row.seq, competitionId: row.competition_id, event: eventRecord(row) };
  });
}

/** The sports and leagues a replay may read; null: any. */
export interface ReplayScope {
  sports: readonly string[] | null;
  leagues: readonly string[] | null;
  /** The endpoint's key: events of another key's sandbox replays are never its (docs/replays.md). */
  viewerKeyId: string;
  /** The endpoint's `min_probability`: events below it were never its. */
  minProbability: number;
  /** The event types the endpoint takes; null: any. */
  types?: readonly string[] | null;
}

/** What a range replay sends: confirmed scores and their corrections. */
const REPLAYED_TYPES = ['score', 'score_retracted'];

/**
 * Sequence numbers of confirmed score events, and of the corrections that retracted some
 * (docs/corrections.md), with ts in [from, to) that the filter admits, in order; at most `max` + 1.
 */
export async function confirmedScoreSeqs(
  db: Db,
  filter: ReplayScope,
  fromIso: string,
  toIso: string,
  max: number,
): Promise<number[]> {
  const rows = await confirmedScoreQuery(db, filter, fromIso, toIso, max).execute();
  return rows.map((r) => r.seq);
}

/** confirmedScoreSeqs' query, unexecuted (its plan is tested). */
export function confirmedScoreQuery(
  db: Db,
  filter: ReplayScope,
  fromIso: string,
  toIso: string,
  max: number,
) {
  return (
    db.kysely
      .selectFrom('events')
      .select('seq')
      // A literal: events_webhook_replay holds confirmed events only (store/migrations/0009-report-indexes.ts).
      .where('tier', '=', sql.lit('confirmed'))
      .where('type', 'in', REPLAYED_TYPES.filter((t) => !filter.types || filter.types.includes(t)).concat(['']))
      .where('ts', '>=', fromIso)
      .where('ts', '<', toIso)
      .$if(filter.sports !== null, (q) => q.where('sport', 'in', filter.sports?.length ? [...filter.sports] : ['']))
      .$if(filter.leagues !== null, (q) => q.where('league', 'in', filter.leagues?.length ? [...filter.leagues] : ['']))
      .where((eb) => eb.or([eb('owner_key_id', 'is', null), eb('owner_key_id', '=', filter.viewerKeyId)]))
      .$if(filter.minProbability > 0, (q) => q.where('probability', '>=', filter.minProbability))
      .orderBy('seq')
      .limit(max + 1)
  );
}

/** A scoring event as a correction reads it (docs/corrections.md). */
export interface ScoreFact {
  id: string;
  game_id: string;
  type: string;
  tier: string;
  team: string;
  points: number;
  clock: string | null;
  ts: string;
  owner_key_id: string | null;
  /** Its `confidence.probability`: a correction of it carries the same, so it reaches whoever the score reached. */
  probability: number;
}

const scoreFact = (r: { seq: number; game_id: string; type: string; tier: string; team: string; points: number; clock: string | null; ts: string; owner_key_id: string | null; probability: number }): ScoreFact => ({
  id: eventId(Number(r.seq)),
  game_id: r.game_id,
  type: r.type,
  tier: r.tier,
  team: r.team,
  points: r.points,
  clock: r.clock,
  ts: r.ts,
  owner_key_id: r.owner_key_id,
  probability: Number(r.probability),
});

const FACT_COLUMNS = ['seq', 'game_id', 'type', 'tier', 'team', 'points', 'clock', 'ts', 'owner_key_id', 'probability'] as const;

/**
 * The reads of a correction, on the transaction that writes it (`k`): every one but `event`
 * narrows by game and tier first (the `events_game` index).
 */
export const correctionReads = {
  async event(k: Kysely<Database>, id: string): Promise<ScoreFact | undefined> {
    const seq = eventSeq(id);
    if (seq === undefined) return undefined;
    const r = await k.selectFrom('events').select(FACT_COLUMNS).where('seq', '=', seq).executeTakeFirst();
    return r && scoreFact(r);
  },

  /** The confirmed score naming this provisional in `provisional_id`. */
  async confirmationOf(k: Kysely<Database>, gameId: string, provisionalId: string): Promise<ScoreFact | undefined> {
    const r = await k
      .selectFrom('events')
      .select(FACT_COLUMNS)
      .where('game_id', '=', gameId)
      .where('tier', '=', 'confirmed')
      .where('type', '=', 'score')
      .where('provisional_id', '=', provisionalId)
      .executeTakeFirst();
    return r && scoreFact(r);
  },

  /** The confirmed scores of a game that no correction has retracted, in order. */
  async standingScores(k: Kysely<Database>, gameId: string): Promise<ScoreFact[]> {
    const rows = await k.selectFrom('events').select([...FACT_COLUMNS, 'retracted_id']).where('game_id', '=', gameId).where('tier', '=', 'confirmed').orderBy('seq').execute();
    const corrected = new Set(rows.flatMap((r) => (r.type === 'score_retracted' && r.retracted_id !== null ? [r.retracted_id] : [])));
    return rows.filter((r) => r.type === 'score' && !corrected.has(eventId(Number(r.seq)))).map(scoreFact);
  },

  /** Whether a correction (a confirmed `score_retracted`) names this event. */
  async corrected(k: Kysely<Database>, gameId: string, id: string): Promise<boolean> {
    const r = await k
      .selectFrom('events')
      .select('seq')
      .where('game_id', '=', gameId)
      .where('tier', '=', 'confirmed')
      .where('type', '=', 'score_retracted')
      .where('retracted_id', '=', id)
      .executeTakeFirst();
    return r !== undefined;
  },
};
