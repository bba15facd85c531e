import { sql, type Kysely, type Migration } from 'kysely';
import { eventJsonTail } from '../events/json.js';
import { eventRowOf } from '../events/rows.js';

const BATCH = 1000;

/**
 * Each event keeps its REST JSON (after the id) beside its columns, written when it is appended,
 * so the bulk export reads one text per event instead of rendering it (docs/decisions.md,
 * "Export"). Events already stored get theirs here, a thousand per statement in `seq` order.
 * SQLite cannot add a NOT NULL column without a default to a table that has rows, so the column
 * is NOT NULL on PostgreSQL only; every writer sets it (the type requires it) and the export's
 * reader refuses a row without it.
 */
export function eventJsonMigration(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('events').addColumn('json_tail', 'text').execute();
      let after = 0;
      for (;;) {
        const { rows } = await sql<Record<string, unknown>>`
          select seq, type, tier, game_id, competition_id, sport, league, season_id, team, event_type, points, clock, ts,
                 agreement, reporters, latency_ms, provisional_id, retracted_id
          from events where seq > ${after} order by seq limit ${BATCH}`.execute(db);
        if (rows.length === 0) break;
        const seqs: number[] = [];
        const tails: string[] = [];
        for (const r of rows) {
          const row = eventRowOf(r);
          seqs.push(row.seq);
          tails.push(eventJsonTail(row));
        }
        if (engine === 'postgres') {
          await sql`update events set json_tail = v.tail from unnest(${seqs}::bigint[], ${tails}::text[]) as v(seq, tail) where events.seq = v.seq`.execute(db);
        } else {
          const pairs = JSON.stringify(seqs.map((s, i) => [s, tails[i]]));
          await sql`update events set json_tail = j.value ->> '$[1]' from json_each(${pairs}) as j where events.seq = j.value ->> '$[0]'`.execute(db);
        }
        after = seqs[seqs.length - 1];
        if (rows.length < BATCH) break;
      }
      if (engine === 'postgres') await sql`alter table events alter column json_tail set not null`.execute(db);
    },
  };
}
