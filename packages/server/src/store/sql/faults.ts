/**
 * Which driver failures mean "the database is away" rather than "this request is wrong" or "svc
 * has a bug" (docs/operations.md, "Faults"). The HTTP layer answers the first two kinds with 503
 * `store_unavailable` or `storage_full` and never shows the driver's text; anything else stays a
 * 500. Classified by the drivers' stable codes (PostgreSQL SQLSTATE, SQLite result codes, errno),
 * never by message, except for the few pg failures that carry none.
 */
export type StoreFault = 'store_unavailable' | 'storage_full';

/** What a client reads for each: ours, never the driver's text (that goes to the log). */
export const STORE_FAULT_MESSAGES: Record<StoreFault, string> = {
  storage_full: 'The database has no space left; nothing was stored. Retry once space is freed.',
  store_unavailable: 'The database cannot be reached right now; nothing was stored. Retry shortly.',
};

/** errno values of a socket or file that is gone, refused or unreachable. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EIO', 'EROFS']);
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/** pg's own failures, raised before or after the server speaks, which carry no code. */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  // No answer within the query timeout (store/sql/pg-primary.ts): the server stalled or went silent.
  'Query read timeout',
];

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = err.code;
  return typeof code === 'string' ? code : undefined;
}

/** PostgreSQL SQLSTATE classes and codes that say the server cannot serve now. */
function pgUnavailable(code: string): boolean {
  // 08 connection exception, 53 insufficient resources, 58 system error (I/O);
  // 57P01..57P03 the server is shutting down, crashed or still starting; 25006 a write reached a
  // server that is (now) read only: a standby, or the old primary after a failover, until svc
  // follows the new primary (store/sql/pg-primary.ts).
  return code.startsWith('08') || code.startsWith('53') || code.startsWith('58') || code === '57P01' || code === '57P02' || code === '57P03' || code === '25006';
}

function sqliteUnavailable(code: string): boolean {
  return (
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_BUSY') ||
    code === 'SQLITE_LOCKED' ||
    code === 'SQLITE_PROTOCOL' ||
    code === 'SQLITE_NOTADB' ||
    code === 'SQLITE_CORRUPT'
  );
}

/**
 * A query the server did not answer within the query timeout (store/pg-primary.ts): it is still
 * outstanding on its connection, so nothing more may be sent there (store/pg-guard.ts).
 */
export function queryUnanswered(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Query read timeout');
}

export function storeFault(err: unknown): StoreFault | null {
  const code = codeOf(err);
  if (code !== undefined) {
    if (NO_SPACE.has(code)) return 'storage_full';
    if (UNREACHABLE.has(code) || pgUnavailable(code) || sqliteUnavailable(code)) return 'store_unavailable';
    return null;
  }
  if (err instanceof Error && PG_CONNECTION_MESSAGES.some((m) => err.message.startsWith(m))) return 'store_unavailable';
  return null;
}
