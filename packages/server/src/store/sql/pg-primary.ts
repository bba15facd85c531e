import pg from 'pg';
import type { PgHost, PgTargets } from './pg-targets.js';

/**
 * Every connection to PostgreSQL has these bounds, so a server that goes silent (packets dropped,
 * the process stopped) turns into 503 `store_unavailable` in bounded time instead of a hang
 * (docs/operations.md, "Failures and what svc does"): a connection is opened within
 * PG_CONNECT_TIMEOUT_MS or given up, which also bounds the wait for a pool slot; a query is
 * answered within PG_QUERY_TIMEOUT_MS or fails; TCP keepalive finds a dead peer of an idle
 * connection. At worst a request waits for a slot, then for its query: 5 s + 10 s = 15 s.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;
export const PG_QUERY_TIMEOUT_MS = 10_000;
const PG_KEEPALIVE_DELAY_MS = 5_000;

/** How often the primary is checked when several hosts are named; a promotion is found within this plus a probe. */
export const PRIMARY_CHECK_MS = 2_000;
const PROBE_TIMEOUT_MS = 2_000;

export function connectionBounds(): Pick<pg.ClientConfig, 'connectionTimeoutMillis' | 'query_timeout' | 'keepAlive' | 'keepAliveInitialDelayMillis'> {
  return { connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS, query_timeout: PG_QUERY_TIMEOUT_MS, keepAlive: true, keepAliveInitialDelayMillis: PG_KEEPALIVE_DELAY_MS };
}

const same = (a: PgHost, b: PgHost) => a.host === b.host && a.port === b.port;

/**
 * Which of the URL's hosts svc writes to, found as libpq does with `target_session_attrs`: the
 * first that answers and, when writes are needed, is not read only (`SHOW transaction_read_only`).
 * With several hosts it looks again every PRIMARY_CHECK_MS: when the one in use stops answering
 * or turns read only (a standby promoted elsewhere, the old primary demoted), the first writable
 * host becomes the primary and the pools that follow it start over there (PrimaryPool). A single
 * host is never probed: there is nowhere else to go.
 */
export class PgPrimary {
  private current: PgHost;
  private readonly listeners = new Set<(at: PgHost) => void>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  private constructor(
    private readonly targets: PgTargets,
    private readonly onSwitch: (from: PgHost, to: PgHost) => void,
  ) {
    this.current = targets.hosts[0];
  }

  /** Finds the primary among the hosts (the first host when none answers yet: its queries then fail as store_unavailable). */
  static async find(targets: PgTargets, onSwitch: (from: PgHost, to: PgHost) => void = () => undefined): Promise<PgPrimary> {
    const primary = new PgPrimary(targets, onSwitch);
    if (targets.hosts.length > 1) {
      primary.current = (await primary.firstWritable()) ?? targets.hosts[0];
      primary.timer = setInterval(() => void primary.check(), PRIMARY_CHECK_MS);
      primary.timer.unref();
    }
    return primary;
  }

  get host(): PgHost {
    return this.current;
  }

  /** Called with the new primary when it changes. */
  follow(listener: (at: PgHost) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  /** One look: the current host still writable, else the first that is. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      if ((await this.probe(this.current)) === 'ok') return;
      const next = await this.firstWritable();
      if (!next || same(next, this.current) || this.timer === null) return;
      const from = this.current;
      this.current = next;
      this.onSwitch(from, next);
      for (const l of this.listeners) l(next);
    } finally {
      this.checking = false;
    }
  }

  private async firstWritable(): Promise<PgHost | null> {
    for (const h of this.targets.hosts) if ((await this.probe(h)) === 'ok') return h;
    return null;
  }

  private async probe(at: PgHost): Promise<'ok' | 'read_only' | 'away'> {
    const client = new pg.Client({ ...this.targets.client, host: at.host, port: at.port, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if (!this.targets.readWrite) return 'ok';
      const res = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
      return res.rows[0]?.transaction_read_only === 'off' ? 'ok' : 'read_only';
    } catch {
      return 'away';
    } finally {
      void client.end().catch(() => undefined);
    }
  }
}

/**
 * A pg pool on the primary of the moment: when PgPrimary moves, a new pool opens on the new host
 * and the old one ends once its checked-out connections come back (their queries finish or fail
 * as store_unavailable). What the store uses of a pool, and nothing else.
 */
export class PrimaryPool {
  private pool: pg.Pool;
  private readonly retired = new Set<Promise<void>>();
  private readonly unfollow: () => void;

  constructor(
    private readonly targets: PgTargets,
    primary: PgPrimary,
    private readonly max: number,
    private readonly onConnectionError?: (err: Error) => void,
  ) {
    this.pool = this.open(primary.host);
    this.unfollow = primary.follow((at) => {
      const old = this.pool;
      this.pool = this.open(at);
      const ended = old.end().catch(() => undefined);
      this.retired.add(ended);
      void ended.then(() => this.retired.delete(ended));
    });
  }

  connect(): Promise<pg.PoolClient> {
    return this.pool.connect();
  }

  query<R extends unknown[]>(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<R>> {
    return this.pool.query<R>(config);
  }

  /** Connections of the pool in use now, and those of them idle (a retired pool's are not counted). */
  get totalCount(): number {
    return this.pool.totalCount;
  }

  get idleCount(): number {
    return this.pool.idleCount;
  }

  async end(): Promise<void> {
    this.unfollow();
    await Promise.all([this.pool.end(), ...this.retired]);
  }

  private open(at: PgHost): pg.Pool {
    const pool = new pg.Pool({ ...this.targets.client, ...connectionBounds(), host: at.host, port: at.port, max: this.max });
    // A pooled client emits 'error' when its connection dies, idle or checked out (pg-pool only
    // listens while it is idle): without a listener of our own that is an unhandled 'error' event
    // and the process exits. One report per connection: a server that ends a connection sends an
    // error message and then closes the socket, and pg emits both.
    pool.on('connect', (client) => {
      let reported = false;
      client.on('error', (err) => {
        if (reported) return;
        reported = true;
        this.onConnectionError?.(err);
      });
    });
    // The pool re-emits an idle client's error; the client's own listener above has reported it.
    pool.on('error', () => undefined);
    return pool;
  }
}
