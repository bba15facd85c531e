import type pg from 'pg';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { queryUnanswered } from './faults.js';
import type { PrimaryPool } from './pg-primary.js';

const COMMANDS = ['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE'] as const;
/** Kysely reads the command only to count affected rows; anything else (BEGIN, COMMIT) counts none. */
const commandOf = (c: string): PostgresQueryResult<unknown>['command'] => COMMANDS.find((x) => x === c) ?? 'SELECT';

/**
 * A pooled connection as Kysely uses it, which stops using the connection once a query on it
 * went unanswered (the query timeout of store/pg-primary.ts: the server stalled or went silent).
 * That query is still outstanding on the connection, and pg queues whatever comes next behind
 * it: a transaction's ROLLBACK waited out a second query timeout there (a write in flight when
 * the database stalled answered after 20 s instead of 10), and the connection, given back to the
 * pool as it was, made the next request that drew it wait too. So after an unanswered query
 * every further query on it fails at once, and its release closes it (the server ends what it
 * had open when the connection goes).
 */
class GuardedClient implements PostgresPoolClient {
  private unanswered: Error | null = null;

  constructor(private readonly client: pg.PoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // svc streams no query through Kysely (bulk reads page with keyset queries instead).
    if (typeof sqlOrCursor !== 'string') throw new Error('cursors are not used on this pool');
    return this.run<R>(sqlOrCursor, parameters);
  }

  private async run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (this.unanswered) throw this.unanswered;
    try {
      const res = await this.client.query(sql, [...parameters]);
      return { command: commandOf(res.command), rowCount: res.rowCount ?? 0, rows: res.rows };
    } catch (err) {
      if (queryUnanswered(err) && err instanceof Error) this.unanswered = err;
      throw err;
    }
  }

  release(): void {
    this.client.release(this.unanswered ?? undefined);
  }
}

/** The pool Kysely draws from (store/db.ts): PrimaryPool's connections, each guarded as above. */
export class GuardedPool implements PostgresPool {
  constructor(private readonly pool: PrimaryPool) {}

  async connect(): Promise<PostgresPoolClient> {
    return new GuardedClient(await this.pool.connect());
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
