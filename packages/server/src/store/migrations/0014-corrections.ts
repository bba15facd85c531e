import type { Kysely, Migration } from 'kysely';

/**
 * Corrections (docs/corrections.md). A play keeps the confirmed event it settled (`event_id`: the
 * event an official scoring play confirmed or matched; on a `score_withdrawn` play, the event it
 * retracted), the `seq` of the correction that withdrew it (`withdrawn_by`), and on a correction
 * what the source named (`withdraws`). Archive plays have none of them.
 */
export function correctionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('plays').addColumn('event_id', 'text').execute();
      await db.schema.alterTable('plays').addColumn('withdrawn_by', 'integer').execute();
      await db.schema.alterTable('plays').addColumn('withdraws', 'text').execute();
    },
  };
}
