import type { Db } from '../sql/db.js';

/**
 * Suspended reporters (docs/reporters.md): all the SQL of `reporter_suspensions`. A row per
 * suspended voter; restoring deletes it. The table stays small (operators suspend a handful), so
 * every node reads it whole to know whom to ignore.
 */
export class SuspensionRepo {
  constructor(private readonly db: Db) {}

  /** Suspends the voter (again: nothing changes); its suspension's time, the first one's if it was already. */
  async suspend(voter: string, keyId: string, reporter: string | null, at: string): Promise<string> {
    await this.db.kysely
      .insertInto('reporter_suspensions')
      .values({ voter, key_id: keyId, reporter, suspended_at: at })
      .onConflict((oc) => oc.column('voter').doNothing())
      .execute();
    const row = await this.db.kysely.selectFrom('reporter_suspensions').select('suspended_at').where('voter', '=', voter).executeTakeFirst();
    return row?.suspended_at ?? at;
  }

  /** Lifts the voter's suspension; false when it was not suspended. */
  async restore(voter: string): Promise<boolean> {
    const r = await this.db.kysely.deleteFrom('reporter_suspensions').where('voter', '=', voter).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Every suspended voter. */
  async voters(): Promise<string[]> {
    const rows = await this.db.kysely.selectFrom('reporter_suspensions').select('voter').execute();
    return rows.map((r) => r.voter);
  }
}
