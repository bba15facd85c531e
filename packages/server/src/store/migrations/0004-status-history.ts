import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The status page's own history: one sample per sport and minute, a per-day tally of them (the
 * 90-day bars read 450 rows, not 650,000), and incidents opened and resolved by the sampler.
 * Rules: docs/status-page.md.
 */
export function statusHistoryMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('status_samples')
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('minute', 'text', (c) => c.notNull())
        .addColumn('up', 'integer', (c) => c.notNull())
        .addColumn('live_games', 'integer', (c) => c.notNull())
        .addColumn('events_5m', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('status_samples_pk', ['sport', 'minute'])
        .execute();
      // Retention deletes by time across sports.
      await db.schema.createIndex('status_samples_minute').on('status_samples').columns(['minute']).execute();
      await db.schema
        .createTable('status_days')
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('sampled', 'integer', (c) => c.notNull())
        .addColumn('up', 'integer', (c) => c.notNull())
        .addColumn('first_minute', 'text', (c) => c.notNull())
        .addColumn('last_minute', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('status_days_pk', ['sport', 'date'])
        .execute();
      await db.schema
        .createTable('status_incidents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('sport', 'text')
        .addColumn('channel', 'text')
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('resolved_at', 'text')
        .execute();
      // At most one open incident per subject, whichever node's sampler saw it first.
      await db.schema
        .createIndex('status_incidents_open')
        .on('status_incidents')
        .column('subject')
        .unique()
        .where(sql.ref('resolved_at'), 'is', null)
        .execute();
      await db.schema.createIndex('status_incidents_started').on('status_incidents').columns(['started_at', 'id']).execute();
      // Live games per sport, read by every status request and sample.
      await db.schema.createIndex('competitions_status').on('competitions').columns(['status', 'sport']).execute();
      // The webhook failure rate counts the attempts of the last minutes by time.
      await db.schema.createIndex('webhook_attempts_at').on('webhook_attempts').columns(['at']).execute();
    },
  };
}
