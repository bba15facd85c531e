import { sql } from 'kysely';
import { isoTime } from '../../domain/clock.js';
import { randomBase62 } from '../../domain/keys.js';
import type { Db } from '../sql/db.js';
import type { StatusIncidentTable } from './types.js';
import { DAY_MS, type DayTally } from '../../domain/status.js';

export interface SportSample {
  sport: string;
  up: boolean;
  liveGames: number;
  events5m: number;
}

export interface IncidentOpening {
  subject: string;
  sport: string | null;
  channel: string | null;
  title: string;
  startedAt: number;
}

export type IncidentRow = StatusIncidentTable;

/** Samples older than this are deleted; the per-day tallies stay. */
const SAMPLE_RETENTION_MS = 91 * DAY_MS;
const newIncidentId = (): string => `inc_${randomBase62(20)}`;

/**
 * The status history in the database: minute samples, per-day tallies and incidents. Every
 * write is idempotent across nodes: a minute is recorded once (its primary key) and counted in
 * its day only by the write that inserted it; a subject has at most one open incident.
 */
export class StatusHistory {
  constructor(private readonly db: Db) {}

  /** Records one minute for every sport; false when another node (or an earlier call) already did. */
  async record(minute: number, samples: SportSample[]): Promise<boolean> {
    const minuteIso = isoTime(minute);
    const date = minuteIso.slice(0, 10);
    return this.db.kysely.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('status_samples')
        .values(samples.map((s) => ({ sport: s.sport, minute: minuteIso, up: s.up ? 1 : 0, live_games: s.liveGames, events_5m: s.events5m })))
        .onConflict((oc) => oc.columns(['sport', 'minute']).doNothing())
        .returning(['sport', 'up'])
        .execute();
      for (const r of inserted) {
        await trx
          .insertInto('status_days')
          .values({ sport: r.sport, date, sampled: 1, up: r.up, first_minute: minuteIso, last_minute: minuteIso })
          .onConflict((oc) =>
            oc.columns(['sport', 'date']).doUpdateSet({
              sampled: sql<number>`status_days.sampled + 1`,
              up: sql<number>`status_days.up + ${r.up}`,
              first_minute: sql<string>`case when status_days.first_minute < ${minuteIso} then status_days.first_minute else ${minuteIso} end`,
              last_minute: sql<string>`case when status_days.last_minute > ${minuteIso} then status_days.last_minute else ${minuteIso} end`,
            }),
          )
          .execute();
      }
      return inserted.length > 0;
    });
  }

  async prune(now: number): Promise<void> {
    await this.db.kysely.deleteFrom('status_samples').where('minute', '<', isoTime(now - SAMPLE_RETENTION_MS)).execute();
  }

  /** Per-sport tallies of the days in [fromDay, toDay], keyed by sport then day start. */
  async days(fromDay: number, toDay: number): Promise<Map<string, Map<number, DayTally>>> {
    const rows = await this.db.kysely
      .selectFrom('status_days')
      .select(['sport', 'date', 'sampled', 'up', 'last_minute'])
      .where('date', '>=', isoTime(fromDay).slice(0, 10))
      .where('date', '<=', isoTime(toDay).slice(0, 10))
      .execute();
    const out = new Map<string, Map<number, DayTally>>();
    for (const r of rows) {
      const bySport = out.get(r.sport) ?? new Map<number, DayTally>();
      const day = Date.parse(`${r.date}T00:00:00.000Z`);
      bySport.set(day, { day, sampled: Number(r.sampled), up: Number(r.up), lastMinute: Date.parse(r.last_minute) });
      out.set(r.sport, bySport);
    }
    return out;
  }

  /** The first minute ever sampled: where the expected minutes of the first day begin. */
  async monitoringStart(): Promise<number | null> {
    const r = await this.db.kysely.selectFrom('status_days').select((eb) => eb.fn.min('first_minute').as('start')).executeTakeFirst();
    return r?.start ? Date.parse(r.start) : null;
  }

  /** Opens an incident unless its subject already has an open one. */
  async open(i: IncidentOpening): Promise<void> {
    await this.db.kysely
      .insertInto('status_incidents')
      .values({ id: newIncidentId(), subject: i.subject, sport: i.sport, channel: i.channel, title: i.title, started_at: isoTime(i.startedAt), resolved_at: null })
      .onConflict((oc) => oc.column('subject').where('resolved_at', 'is', null).doNothing())
      .execute();
  }

  async resolve(subject: string, at: number): Promise<void> {
    await this.db.kysely.updateTable('status_incidents').set({ resolved_at: isoTime(at) }).where('subject', '=', subject).where('resolved_at', 'is', null).execute();
  }

  /** Open incidents and those that started since `since`, newest first. */
  async incidents(since: number, limit: number): Promise<IncidentRow[]> {
    return this.db.kysely
      .selectFrom('status_incidents')
      .selectAll()
      .where((eb) => eb.or([eb('started_at', '>=', isoTime(since)), eb('resolved_at', 'is', null)]))
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
}
