import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The due index in event order within a time. A burst of events (one batch of reports, a backlog)
 * gives many deliveries the same next_attempt_at; ordered by endpoint within it, they formed long
 * runs of one endpoint, which a claim read through only to skip once that endpoint was at its
 * cap. In event order an event's deliveries to different endpoints come together, so a claim
 * reads about as many rows as it takes (bench/RESULTS.md "Webhook claims from the index alone").
 */
export function webhookDueByEventMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('webhook_deliveries_due').execute();
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['next_attempt_at', 'event_seq', 'endpoint_id'])
        .where(sql.ref('status'), '=', 'pending')
        .execute();
    },
  };
}
