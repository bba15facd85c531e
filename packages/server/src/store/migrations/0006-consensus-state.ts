import type { Kysely, Migration } from 'kysely';

/**
 * Consensus state kept in the store so any node can rebuild a game's open candidates and the
 * reporters' track records after a crash or a handover (docs/consensus.md, "Cluster"): each
 * report names the candidate it voted for or repeated, candidates keep their state and the
 * events they published, track records are counted as candidates close, and each game's
 * consensus is leased to one node with a fencing token.
 */
export function consensusStateMigration(engine: 'sqlite' | 'postgres'): Migration {
  const msType = engine === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('reports').addColumn('candidate_id', 'text').execute();
      // A rebuild reads a game's recent reports.
      await db.schema.createIndex('reports_game_received').on('reports').columns(['game_id', 'received_at']).execute();
      await db.schema
        .createTable('consensus_candidates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('game_id', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('points', 'integer', (c) => c.notNull())
        .addColumn('first_observed_at', msType, (c) => c.notNull())
        .addColumn('first_received_at', msType, (c) => c.notNull())
        .addColumn('event_type', 'text')
        .addColumn('clock', 'text')
        .addColumn('starter', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('published', 'integer', (c) => c.notNull())
        .addColumn('official', 'integer', (c) => c.notNull())
        .addColumn('provisional_event_id', 'text')
        .addColumn('confirmed_event_id', 'text')
        .execute();
      await db.schema.createIndex('consensus_candidates_game').on('consensus_candidates').columns(['game_id', 'first_received_at']).execute();
      await db.schema.createIndex('consensus_candidates_state').on('consensus_candidates').columns(['state', 'game_id']).execute();
      await db.schema
        .createTable('reporter_records')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('agreed', 'integer', (c) => c.notNull())
        .addColumn('disagreed', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('consensus_leases')
        .addColumn('game_id', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('token', msType, (c) => c.notNull())
        .addColumn('expires_at', msType, (c) => c.notNull())
        .execute();
    },
  };
}
