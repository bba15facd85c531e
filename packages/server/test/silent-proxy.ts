import net from 'node:net';

/**
 * A TCP proxy of the test's own in front of a dependency, which can go silent: while muted it
 * forwards nothing in either direction and closes nothing, as a network that drops packets does
 * (a stopped process answers with a reset at once; a dropped packet never answers). What was sent
 * meanwhile arrives once unmuted, as TCP's retransmissions would deliver it. New connections are
 * accepted and then hear nothing either.
 */
export class SilentProxy {
  private muted = false;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<SilentProxy> {
    let proxy: SilentProxy | null = null;
    const server = net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      proxy?.pairs.add(pair);
      const forward = (from: net.Socket, to: net.Socket) => from.on('data', (chunk: Buffer) => to.write(chunk));
      forward(client, upstream);
      forward(upstream, client);
      if (proxy?.muted) for (const s of pair) s.pause();
      const end = () => {
        proxy?.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy did not listen');
    proxy = new SilentProxy(server, address.port);
    return proxy;
  }

  /** Nothing is read on either side: bytes wait in the kernel's buffers, unanswered. */
  mute(): void {
    this.muted = true;
    for (const pair of this.pairs) for (const s of pair) s.pause();
  }

  unmute(): void {
    this.muted = false;
    for (const pair of this.pairs) for (const s of pair) s.resume();
  }

  async close(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
