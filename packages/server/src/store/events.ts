import type { Event } from '@svc/schema';
import { sql, type Insertable, type Transaction } from 'kysely';
import type { Db } from './db.js';
import { eventSeq } from '@svc/schema';
import { eventRecord } from './competitions.js';
import type { Database, EventTable } from './types.js';

export type NewEvent = Insertable<EventTable> & {
  /** Index of an earlier row of the same append whose id becomes this row's provisional_id. */
  provisionalIndex?: number;
};

/** A stored event with what the stream needs to route it without another lookup. */
export interface StoredEvent {
  seq: number;
  competitionId: string;
  seasonId: string;
  event: Event;
}

/** Runs inside the append transaction: the webhook outbox writes its rows here. */
export type OutboxHook = (trx: Transaction<Database>, events: StoredEvent[]) => Promise<void>;

/**
 * The append-only event log with its global sequence. Events and their outbox rows commit
 * together, so a confirmed event can never exist without its webhook deliveries.
 */
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
   * rows (writes that must commit with them); with either, the transaction runs even without rows.
   */
  async append(rows: NewEvent[], opts: { before?: (trx: Transaction<Database>) => Promise<void>; within?: (trx: Transaction<Database>, stored: StoredEvent[]) => Promise<void> } = {}): Promise<StoredEvent[]> {
    if (rows.length === 0 && !opts.before && !opts.within) return [];
    const stored = await this.db.kysely.transaction().execute(async (trx) => {
      await opts.before?.(trx);
      // On PostgreSQL, concurrent appenders would commit out of sequence order and a resume
      // reading "after N" could skip a late-committing lower seq; one lock keeps them in order.
      if (this.db.engine === 'postgres' && rows.length > 0) await sql`select pg_advisory_xact_lock(7301)`.execute(trx);
      const stored: StoredEvent[] = [];
      for (const { provisionalIndex, ...row } of rows) {
        if (provisionalIndex !== undefined) row.provisional_id = stored[provisionalIndex]?.event.id ?? row.provisional_id;
        const r = await trx.insertInto('events').values(row).returningAll().executeTakeFirstOrThrow();
        stored.push({ seq: r.seq, competitionId: r.competition_id, seasonId: r.season_id, event: eventRecord(r) });
      }
      if (stored.length > 0) for (const hook of this.hooks) await hook(trx, stored);
      await opts.within?.(trx, stored);
      return stored;
    });
    if (stored.length > 0) for (const listener of this.committed) listener(stored);
    return stored;
  }

  /**
   * Events after `seq` in order, for stream resume; `limit` caps the read. `sports`, `leagues`,
   * `games` and `tier` each narrow (AND); `anyOf` is a stream subscription: an event matches when
   * its sport, league or game is in one of its lists (a union), and an empty union matches nothing.
   */
  async after(
    seq: number,
    limit: number,
    filter: {
      sports?: readonly string[] | null;
      leagues?: readonly string[] | null;
      games?: readonly string[] | null;
      tier?: string | null;
      /** Only events with a seq below this one. */
      below?: number;
      anyOf?: { sports: readonly string[]; leagues: readonly string[]; games: readonly string[] };
    },
  ): Promise<StoredEvent[]> {
    const anyOf = filter.anyOf;
    const rows = await this.db.kysely
      .selectFrom('events')
      .selectAll()
      .where('seq', '>', seq)
      .$if(filter.below !== undefined, (q) => q.where('seq', '<', filter.below ?? 0))
      .$if(!!filter.sports, (q) => q.where('sport', 'in', filter.sports?.length ? [...filter.sports] : ['']))
      .$if(!!filter.leagues, (q) => q.where('league', 'in', filter.leagues?.length ? [...filter.leagues] : ['']))
      .$if(!!filter.games, (q) => q.where('game_id', 'in', filter.games?.length ? [...filter.games] : ['']))
      .$if(!!filter.tier, (q) => q.where('tier', '=', filter.tier ?? ''))
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
      .execute();
    return rows.map((r) => ({ seq: r.seq, competitionId: r.competition_id, seasonId: r.season_id, event: eventRecord(r) }));
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
    return r && { seq: r.seq, competitionId: r.competition_id, seasonId: r.season_id, event: eventRecord(r) };
  }
}

/** Events by sequence number, in no particular order (the webhook dispatcher's bodies). */
export async function eventsBySeq(db: Db, seqs: readonly number[]): Promise<{ seq: number; event: Event }[]> {
  if (seqs.length === 0) return [];
  const rows = await db.kysely.selectFrom('events').selectAll().where('seq', 'in', [...seqs]).execute();
  return rows.map((r) => ({ seq: r.seq, event: eventRecord(r) }));
}

/** Sequence numbers of confirmed score events with ts in [from, to) that the filter admits, in order; at most `max` + 1. */
export async function confirmedScoreSeqs(
  db: Db,
  filter: { sports: readonly string[] | null; leagues: readonly string[] | null },
  fromIso: string,
  toIso: string,
  max: number,
): Promise<number[]> {
  const rows = await db.kysely
    .selectFrom('events')
    .select('seq')
    .where('tier', '=', 'confirmed')
    .where('type', '=', 'score')
    .where('ts', '>=', fromIso)
    .where('ts', '<', toIso)
    .$if(filter.sports !== null, (q) => q.where('sport', 'in', filter.sports?.length ? [...filter.sports] : ['']))
    .$if(filter.leagues !== null, (q) => q.where('league', 'in', filter.leagues?.length ? [...filter.leagues] : ['']))
    .orderBy('seq')
    .limit(max + 1)
    .execute();
  return rows.map((r) => r.seq);
}
