/**
 * The tables `svc migrate-store` treats apart from the rest (docs/operations.md "From one node to
 * a cluster"). Every other table of the schema is copied, whatever its name: the list of tables
 * comes from the source database itself, so a table a later migration adds is copied too.
 */

/** The migrator's bookkeeping: the target's own migrator writes them when it builds the schema. */
export const SCHEMA_TABLES: readonly string[] = ['kysely_migration', 'kysely_migration_lock'];

/**
 * State that belongs to one running node and means nothing to another: not copied, so it starts
 * empty on the target as it would on a fresh cluster.
 * - `consensus_leases`: which node owns each game's consensus, with fencing tokens; the node named
 *   is gone, and the cluster's nodes claim the games afresh (docs/consensus.md "Cluster").
 * Claims kept in other tables' rows (a simulator's claim on a game in `meta`, a replay's driver,
 * a webhook delivery's claim) carry their own expiry and are copied: they lapse on the cluster
 * exactly as they would when the single node restarted.
 */
export const PER_NODE_TABLES: readonly string[] = ['consensus_leases'];

/** The target's record of an unfinished migration, one row per table; dropped once it is verified. */
export const PROGRESS_TABLE = 'svc_migrate_store_progress';

/** The indexes an unfinished migration set aside to build after the rows (store/transfer/pg-target.ts). */
export const DEFERRED_INDEXES = 'svc_migrate_store_indexes';
