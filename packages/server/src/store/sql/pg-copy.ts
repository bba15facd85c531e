import type pg from 'pg';

/** A COPY's output passed this size: the statement is not the bounded page it should be. */
export class CopyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`COPY output passed ${maxBytes} bytes`);
    this.name = 'CopyTooLarge';
  }
}

/** What node-postgres' connection offers a COPY FROM (its types leave it out). */
interface CopyFailSender {
  sendCopyFail(message: string): void;
}

/** The message node-postgres hands over for each CopyData: `chunk` lies in its reused read buffer. */
interface CopyDataMessage {
  chunk: Buffer;
}

/**
 * One `COPY (...) TO STDOUT` as a node-postgres Submittable: the client parses the protocol and
 * calls these handlers on its active query. CopyData chunks are copied out at once, since the
 * parser reuses the buffer they lie in; the bytes are whole once ReadyForQuery arrives.
 */
class CopyOut implements pg.Submittable {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private size = 0;
  private overflowed = false;
  // Replaced by the promise's own functions as it is made (an executor runs at once); the first
  // outcome settles it and later ones are no-ops, as for any promise.
  private resolve: (bytes: Buffer) => void = () => undefined;
  private reject: (err: Error) => void = () => undefined;
  readonly result = new Promise<Buffer>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(
    private readonly text: string,
    private readonly maxBytes: number,
  ) {}

  submit(connection: pg.Connection): void {
    connection.query(this.text);
  }

  handleCopyData(msg: CopyDataMessage): void {
    const chunk = msg.chunk;
    if (this.overflowed) return;
    if (this.size + chunk.length > this.maxBytes) {
      // The server keeps sending until the statement ends; what follows is dropped.
      this.overflowed = true;
      return;
    }
    if (this.size + chunk.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxBytes, Math.max(this.buffer.length * 2, this.size + chunk.length)));
      this.buffer.copy(grown, 0, 0, this.size);
      this.buffer = grown;
    }
    this.size += chunk.copy(this.buffer, this.size);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (this.overflowed) this.reject(new CopyTooLarge(this.maxBytes));
    else this.resolve(this.buffer.subarray(0, this.size));
  }

  handleError(err: Error): void {
    this.reject(err);
  }

  // A COPY TO STDOUT answers with none of these; a statement that does is not one.
  handleRowDescription(): void {
    this.reject(new Error('a COPY answered with rows'));
  }

  handleDataRow(): void {}

  handlePortalSuspended(): void {}

  handleEmptyQuery(): void {
    this.reject(new Error('an empty statement where a COPY was expected'));
  }

  /** Without an answer a COPY FROM would wait for data forever. */
  handleCopyInResponse(connection: CopyFailSender): void {
    connection.sendCopyFail('a COPY FROM where a COPY TO was expected');
  }
}

/**
 * Runs `sql`, a `COPY (...) TO STDOUT`, on a connection of the pool and returns every byte it
 * sent. The connection is destroyed rather than returned when the statement failed.
 */
export async function copyOut(pool: { connect(): Promise<pg.PoolClient> }, sql: string, maxBytes: number): Promise<Buffer> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    return await client.query(new CopyOut(sql, maxBytes)).result;
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
    throw failure;
  } finally {
    client.release(failure);
  }
}
