import net from 'node:net';

/**
 * A TCP relay of the test's own in front of PostgreSQL that counts round trips: each
 * ReadyForQuery message the server sends ends one (a simple query message, however many
 * statements it holds, or an extended-protocol Sync), less the one each new connection gets
 * after its start-up. It only reads the headers of the server's messages (a type byte and a
 * length that counts itself) and forwards every byte as it came. bench/capacity.ts counts with it too.
 */
export class PgTripCounter {
  private answered = 0;
  private connections = 0;
  private readonly sockets = new Set<net.Socket>();
  private constructor(private readonly server: net.Server) {}

  static async start(pgPort: number, pgHost = '127.0.0.1'): Promise<PgTripCounter> {
    const server = net.createServer();
    const counter = new PgTripCounter(server);
    server.on('connection', (client) => {
      counter.connections += 1;
      const upstream = net.connect(pgPort, pgHost);
      for (const s of [client, upstream]) {
        s.setNoDelay(true);
        counter.sockets.add(s);
      }
      const header = Buffer.alloc(5);
      let have = 0;
      let rest = 0;
      upstream.on('data', (chunk: Buffer) => {
        for (let i = 0; i < chunk.length; ) {
          if (rest > 0) {
            const take = Math.min(rest, chunk.length - i);
            rest -= take;
            i += take;
            continue;
          }
          header[have++] = chunk[i++];
          if (have === 5) {
            if (header[0] === 0x5a) counter.answered += 1;
            rest = header.readInt32BE(1) - 4;
            have = 0;
          }
        }
        client.write(chunk);
      });
      client.on('data', (chunk: Buffer) => upstream.write(chunk));
      const end = () => {
        for (const s of [client, upstream]) {
          s.destroy();
          counter.sockets.delete(s);
        }
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return counter;
  }

  get port(): number {
    const a = this.server.address();
    return a && typeof a !== 'string' ? a.port : 0;
  }

  /** `url` with its host and port replaced by the relay's. */
  urlOf(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Round trips so far, each connection's start-up left out. */
  get trips(): number {
    return this.answered - this.connections;
  }

  /** The round trips `fn` made. */
  async count(fn: () => Promise<unknown>): Promise<number> {
    const before = this.trips;
    await fn();
    return this.trips - before;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
