import type pg from 'pg';

/** What node-postgres' connection offers a COPY FROM (its types leave it out). */
interface CopyInSender {
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
}

/** The message node-postgres hands over for each CopyData: `chunk` lies in its reused read buffer. */
interface CopyDataMessage {
  chunk: Buffer;
}

/** A command's completion message: `COPY 1234` for a COPY. */
interface CommandCompleteMessage {
  text?: string;
}

/** CopyData messages of at most this size: PostgreSQL takes up to 1 GB, a socket write likes less. */
const CHUNK_BYTES = 256 * 1024;

/** The base of a COPY statement as a node-postgres Submittable: the client calls these on its active query. */
abstract class CopyStatement implements pg.Submittable {
  protected rows = 0;
  private failure: Error | null = null;
  // Replaced by the promise's own functions as it is made (an executor runs at once).
  private resolve: (rows: number) => void = () => undefined;
  private reject: (err: Error) => void = () => undefined;
  readonly result = new Promise<number>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(private readonly text: string) {}

  submit(connection: pg.Connection): void {
    connection.query(this.text);
  }

  handleCommandComplete(msg: CommandCompleteMessage): void {
    const m = /^COPY (\d+)$/.exec(msg.text ?? '');
    if (m) this.rows = Number(m[1]);
  }

  /**
   * The server's error (or the connection's end): node-postgres drops the statement from its
   * active slot first, so no ReadyForQuery reaches it; it settles here.
   */
  handleError(err: Error): void {
    this.reject(this.failure ?? err);
  }

  /** A failure of ours while the statement runs: settled by its ReadyForQuery, the connection then idle again. */
  protected fail(err: Error): void {
    this.failure ??= err;
  }

  handleReadyForQuery(): void {
    if (this.failure) this.reject(this.failure);
    else this.resolve(this.rows);
  }

  handleRowDescription(): void {
    this.fail(new Error('a COPY answered with rows'));
  }

  handleDataRow(): void {}

  handlePortalSuspended(): void {}

  handleEmptyQuery(): void {
    this.fail(new Error('an empty statement where a COPY was expected'));
  }

  handleCopyInResponse(connection: CopyInSender): void {
    connection.sendCopyFail('a COPY FROM where a COPY TO was expected');
  }

  handleCopyData(_msg: CopyDataMessage): void {
    this.fail(new Error('COPY data where none was expected'));
  }
}

/** `COPY … FROM STDIN` sending `data` (COPY text, whole lines). */
class CopyIn extends CopyStatement {
  constructor(
    text: string,
    private readonly data: Buffer,
  ) {
    super(text);
  }

  override handleCopyInResponse(connection: CopyInSender): void {
    for (let at = 0; at < this.data.length; at += CHUNK_BYTES) connection.sendCopyFromChunk(this.data.subarray(at, at + CHUNK_BYTES));
    connection.endCopyFrom();
  }
}

/** `COPY (…) TO STDOUT` handing each line (without its newline) to `onLine` as it arrives. */
class CopyOutLines extends CopyStatement {
  private rest: Buffer = Buffer.alloc(0);

  constructor(
    text: string,
    private readonly onLine: (line: string) => void,
  ) {
    super(text);
  }

  override handleCopyData(msg: CopyDataMessage): void {
    // The chunk lies in the parser's reused buffer: read it now. PostgreSQL sends a row per
    // message, but nothing here depends on it.
    let chunk = this.rest.length > 0 ? Buffer.concat([this.rest, msg.chunk]) : msg.chunk;
    let nl = chunk.indexOf(0x0a);
    try {
      while (nl !== -1) {
        this.onLine(chunk.toString('utf8', 0, nl));
        chunk = chunk.subarray(nl + 1);
        nl = chunk.indexOf(0x0a);
      }
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
    this.rest = Buffer.from(chunk);
  }
}

/** Runs `sql`, a `COPY … FROM STDIN` in text format, sending `data`; answers the rows PostgreSQL took. */
export function copyIn(client: pg.ClientBase, sql: string, data: Buffer): Promise<number> {
  return client.query(new CopyIn(sql, data)).result;
}

/**
 * Runs `sql`, a `COPY (…) TO STDOUT` in text format, calling `onLine` for each row as it arrives:
 * memory stays at a row however large the table. Answers the number of rows.
 */
export function copyOutLines(client: pg.ClientBase, sql: string, onLine: (line: string) => void): Promise<number> {
  return client.query(new CopyOutLines(sql, onLine)).result;
}
