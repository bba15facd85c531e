import type { Kysely, Migration } from 'kysely';

type Engine = 'sqlite' | 'postgres';

/**
 * The schedule's changes and the change feed (docs/schedule.md, docs/changes.md):
 * - a competition's first announced start once it moved, and the reason of its last status change;
 * - a `status` event's own fields on the event row (null on scoring events);
 * - the event types a webhook endpoint wants (a JSON array, null for all);
 * - `changes`, the feed's log: one row per created or updated competition and per event, numbered
 *   in one order by the database (under the event log's lock on PostgreSQL).
 */
export function scheduleMigration(engine: Engine): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('competitions').addColumn('original_start_time', 'text').execute();
      await db.schema.alterTable('competitions').addColumn('status_reason', 'text').execute();
      for (const column of ['status', 'previous_status', 'start_time', 'reason']) {
        await db.schema.alterTable('events').addColumn(column, 'text').execute();
      }
      await db.schema.alterTable('webhook_endpoints').addColumn('types', 'text').execute();
      await db.schema
        .createTable('changes')
        .addColumn('seq', engine === 'postgres' ? 'bigserial' : 'integer', (c) => (engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('owner_key_id', 'text')
        .addColumn('at', 'text', (c) => c.notNull())
        .execute();
      // An export's cursor finds the change of an event (store/events/changes.ts ofEvent).
      await db.schema.createIndex('changes_object').on('changes').columns(['object_id']).execute();
      // Retention deletes by time.
      await db.schema.createIndex('changes_at').on('changes').columns(['at']).execute();
      await db.schema
        .createTable('changes_pruned')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('through_seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
