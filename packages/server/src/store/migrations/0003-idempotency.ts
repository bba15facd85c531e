import type { Kysely, Migration } from 'kysely';

/** Responses kept per API key and Idempotency-Key, so a retried POST replays instead of repeating. */
export function idempotencyMigration(engine: 'sqlite' | 'postgres'): Migration {
  const msType = engine === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('claim_token', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('status_code', 'integer')
        .addColumn('content_type', 'text')
        .addColumn('body', 'text')
        .addColumn('created_at', msType, (c) => c.notNull())
        .addColumn('expires_at', msType, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['key_id', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
    },
  };
}
