import type { Kysely, Migration } from 'kysely';

/**
 * Sandbox replays (docs/replays.md): the replays themselves, and the owner key of a game and of
 * its events. A real game and its events have no owner (null) and every key may see them; a
 * replay's game and events belong to the key that created the replay, and to no one else.
 */
export function replaysMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('competitions').addColumn('owner_key_id', 'text').execute();
      await db.schema.alterTable('events').addColumn('owner_key_id', 'text').execute();
      await db.schema
        .createTable('replays')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('game_id', 'text', (c) => c.notNull())
        .addColumn('competition_id', 'text', (c) => c.notNull())
        .addColumn('source_game_id', 'text', (c) => c.notNull())
        .addColumn('source_competition_id', 'text', (c) => c.notNull())
        .addColumn('speed', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        // The node driving the replay and until when its claim holds (docs/replays.md "Who drives").
        .addColumn('driver', 'text')
        .addColumn('driver_until', 'text')
        .execute();
      await db.schema.createIndex('replays_key').on('replays').columns(['key_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('replays_status').on('replays').column('status').execute();
    },
  };
}
