import { sql, type Kysely, type Migration } from 'kysely';
import { eventJsonTail } from '../events/json.js';
import { eventRowOf } from '../events/rows.js';

const BATCH = 1000;

/**
 * Crowd trust (docs/consensus.md "Threat model"):
 * - `reporters`: one track record per voter (a key's own voice, or a reporter a key names: its
 *   voter id, the key id and the reporter after a `/`, as `reporter_suspensions` names it), with
 *   its reports, agreements, official verdicts, misses, probation and weight; the keys' records
 *   of `reporter_records` move here (the key's own voice) and that table goes;
 * - `reports.reporter`: who a report came from under its key (null: the key's own voice);
 * - `consensus_candidates.judged` (official data judged its voters) and `.probability` (its
 *   provisional's);
 * - `events.probability` (`confidence.probability`): events stored before carry their agreement
 *   (official ones 1), a retraction the score's it retracted, and their stored JSON is written again;
 * - `webhook_endpoints.min_probability` (0: every event).
 */
export function crowdTrustMigration(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reporters')
        .addColumn('voter', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('reporter', 'text')
        .addColumn('reports', 'integer', (c) => c.notNull())
        .addColumn('agreed', 'integer', (c) => c.notNull())
        .addColumn('disagreed', 'integer', (c) => c.notNull())
        .addColumn('official_confirmed', 'integer', (c) => c.notNull())
        .addColumn('official_contradicted', 'integer', (c) => c.notNull())
        .addColumn('missed', 'integer', (c) => c.notNull())
        .addColumn('probation', 'integer', (c) => c.notNull())
        .addColumn('weight', 'double precision', (c) => c.notNull())
        .addColumn('last_report_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reporters_key').on('reporters').columns(['key_id', 'voter']).execute();
      const { rows: old } = await sql<{ key_id: string; agreed: number; disagreed: number }>`select key_id, agreed, disagreed from reporter_records`.execute(db);
      const now = new Date().toISOString();
      for (let i = 0; i < old.length; i += BATCH) {
        const values = old.slice(i, i + BATCH).map((r) => {
          const [agreed, disagreed] = [Number(r.agreed), Number(r.disagreed)];
          return sql`(${r.key_id}, ${r.key_id}, ${null}, ${0}, ${agreed}, ${disagreed}, 0, 0, 0, 0, ${(agreed + 1) / (agreed + disagreed + 2)}, ${null}, ${now})`;
        });
        await sql`insert into reporters (voter, key_id, reporter, reports, agreed, disagreed, official_confirmed, official_contradicted, missed, probation, weight, last_report_at, created_at) values ${sql.join(values)}`.execute(db);
      }
      await db.schema.dropTable('reporter_records').execute();

      await db.schema.alterTable('reports').addColumn('reporter', 'text').execute();
      await db.schema.alterTable('consensus_candidates').addColumn('judged', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('consensus_candidates').addColumn('probability', 'double precision').execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('min_probability', 'double precision', (c) => c.notNull().defaultTo(0)).execute();

      await db.schema.alterTable('events').addColumn('probability', 'double precision', (c) => c.notNull().defaultTo(1)).execute();
      // Events stored before: their agreement was the only estimate made (official ones carry 1),
      // and a retraction carries the retracted score's, as rule 17 has retractions do (a
      // correction's, docs/corrections.md, the confirmed score's it withdrew).
      await sql`update events set probability = agreement where type = 'score'`.execute(db);
      await sql`update events set probability = coalesce((select p.probability from events p where p.type = 'score' and ${
        engine === 'postgres' ? sql`'evt_' || lpad(p.seq::text, 12, '0')` : sql`'evt_' || substr('000000000000' || p.seq, -12, 12)`
      } = events.retracted_id), 0) where type = 'score_retracted'`.execute(db);
      let after = 0;
      for (;;) {
        const { rows } = await sql<Record<string, unknown>>`
          select seq, type, tier, game_id, competition_id, sport, league, season_id, team, event_type, points, clock, ts,
                 agreement, reporters, latency_ms, probability, provisional_id, retracted_id, status, previous_status, start_time, reason
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
    },
  };
}
