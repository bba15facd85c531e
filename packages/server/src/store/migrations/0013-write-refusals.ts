import { sql, type Kysely, type Migration } from 'kysely';

/** The SQLSTATE `svc_refuse` raises. */
export const REFUSED_SQLSTATE = 'SVC01';

/**
 * `svc_refuse(reason)` on PostgreSQL: raises SQLSTATE SVC01 with `reason` as its message. A
 * write's fence is one statement that calls it when the stored state is not what the writer
 * believed (store/sql/write-tx.ts `Fence`), so the fence can travel in the same message as the write
 * and its COMMIT. Volatile, so the planner never evaluates it ahead of the condition. SQLite
 * checks its fences' rows in the process and needs nothing.
 */
export function refusalsMigration(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine !== 'postgres') return;
      await sql
        .raw(
          `create or replace function svc_refuse(reason text) returns integer language plpgsql volatile as $$ ` +
            `begin raise exception using errcode = '${REFUSED_SQLSTATE}', message = reason; end $$`,
        )
        .execute(db);
    },
  };
}
