import type { Kysely, Migration } from 'kysely';

/**
 * Suspended reporters (docs/reporters.md): one row per suspended voter, by its voter id (the key
 * id, and the reporter the key named after a `/`), with the key apart for the list's `key` filter.
 * Restoring deletes the row; every node reads the table to know whom to ignore.
 */
export function reporterSuspensionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reporter_suspensions')
        .addColumn('voter', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('reporter', 'text')
        .addColumn('suspended_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
