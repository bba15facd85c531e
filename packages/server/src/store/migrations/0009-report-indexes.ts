import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Two indexes of a report's write hold only the rows that their one reader asks for
 * (docs/architecture.md "Hot writes"):
 *
 * - `events_webhook_replay` serves the webhook range replay, which reads confirmed events by `ts`
 *   alone; every provisional event (one per crowd report that opens a candidate) was an entry no
 *   query reads.
 * - `reports_key_ref` makes a report's `ref` unique per key and finds it again; a report sent
 *   without a ref (most of them) was an entry under a null that nothing looks up and that no
 *   uniqueness covers (nulls are distinct in a unique index on both engines).
 *
 * Each is one B-tree page less that a report's commit writes to the WAL (SQLite) or the heap's
 * indexes (PostgreSQL). The replay's query names the tier as a literal, so that a plan made
 * without its parameters' values (a generic PostgreSQL plan) may still use the index.
 */
export function reportIndexesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('events_webhook_replay').execute();
      await db.schema.createIndex('events_webhook_replay').on('events').column('ts').where(sql.ref('tier'), '=', sql.lit('confirmed')).execute();
      await db.schema.dropIndex('reports_key_ref').execute();
      await db.schema.createIndex('reports_key_ref').on('reports').columns(['key_id', 'ref']).unique().where(sql.ref('ref'), 'is not', null).execute();
    },
  };
}
