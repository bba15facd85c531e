import type { Redis, RedisOptions } from 'ioredis';

/**
 * Every connection to Redis has these bounds, so a Redis that goes silent (packets dropped, the
 * process stopped) turns into "away" in bounded time instead of a hang (docs/operations.md,
 * "Failures and what svc does"): a connection is opened within REDIS_CONNECT_TIMEOUT_MS, a
 * command answered within REDIS_COMMAND_TIMEOUT_MS or failed, TCP keepalive finds a dead peer of
 * an idle connection, and a PING every HEARTBEAT_MS finds a silent one (see `watch`).
 */
export const REDIS_CONNECT_TIMEOUT_MS = 5_000;
export const REDIS_COMMAND_TIMEOUT_MS = 3_000;
/**
 * A PING every HEARTBEAT_MS, given HEARTBEAT_TIMEOUT_MS or the command timeout, whichever ends
 * first: generous, since a timer fires late on an event loop held up by other work, and a busy
 * node must not take Redis for away (a node under test load did, at 1.5 s).
 */
const HEARTBEAT_MS = 2_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;

export function redisOptions(): RedisOptions {
  return { maxRetriesPerRequest: 2, connectTimeout: REDIS_CONNECT_TIMEOUT_MS, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, keepAlive: 5_000 };
}

/** One connection's state: away from its close (or a missed heartbeat) until it is ready again. */
class Watch {
  away: boolean;
  private timer: NodeJS.Timeout | null = null;
  private pinging = false;

  constructor(private readonly client: Redis) {
    this.away = client.status === 'end' || client.status === 'close';
    const down = () => {
      this.away = true;
    };
    client.on('close', down);
    client.on('end', () => {
      down();
      if (this.timer) clearInterval(this.timer);
    });
    client.on('ready', () => {
      this.away = false;
    });
    this.timer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /**
   * A connection that is open but gets no answer (packets dropped) never closes by itself: a PING
   * left unanswered for HEARTBEAT_TIMEOUT_MS marks it away and makes ioredis open a new one, which
   * becomes ready only once Redis answers again.
   */
  private heartbeat(): void {
    if (this.pinging || this.away || this.client.status !== 'ready') return;
    this.pinging = true;
    let settled = false;
    const silent = () => {
      if (settled) return;
      settled = true;
      clearTimeout(late);
      this.pinging = false;
      this.away = true;
      this.client.disconnect(true);
    };
    const late = setTimeout(silent, HEARTBEAT_TIMEOUT_MS);
    // A PING that fails (its command timeout, or a connection that went) counts as unanswered too.
    this.client.ping().then(() => {
      if (settled) return;
      settled = true;
      clearTimeout(late);
      this.pinging = false;
    }, silent);
  }
}

const watches = new WeakMap<Redis, Watch>();

function watch(client: Redis): Watch {
  let w = watches.get(client);
  if (!w) {
    w = new Watch(client);
    watches.set(client, w);
  }
  return w;
}

/**
 * Whether Redis is known to be away: one of the connections closed (or missed its heartbeat) and
 * has not been ready since (docs/operations.md, "Faults"). ioredis would hold a command sent
 * meanwhile in its offline queue until its reconnects run out, seconds later; while Redis is known
 * away, a call that needs it fails at once (503 `bus_unavailable`) and one that does not skips it
 * (local rate limits and slots, events to this node's own streams). A client that has not
 * connected yet is not known away: its first connect still queues. Its `status` alone would not
 * do: between two reconnect attempts it reads `connecting`, as at the first connect.
 */
export function redisKnownAway(...clients: Redis[]): () => boolean {
  const watched = clients.map(watch);
  return () => watched.some((w) => w.away);
}

const RESUBSCRIBE_MS = 1_000;

/**
 * One channel subscribed on a subscriber connection. ioredis subscribes again by itself after a
 * reconnect, but only to channels whose SUBSCRIBE succeeded: one that failed (Redis away at start,
 * or too slow to answer on a busy machine) is tried again every RESUBSCRIBE_MS, and at once by a
 * call that needs it (`ensure`), instead of leaving the node deaf to its channel for good.
 */
export class ChannelSubscription {
  private subscribed = false;
  private pending: Promise<Error | null> | null = null;

  constructor(
    private readonly client: Redis,
    private readonly channel: string,
  ) {
    void this.ensure();
  }

  /** Resolves once subscribed, at once when already; to the error when this try failed, never rejects. */
  ensure(): Promise<Error | null> {
    if (this.subscribed) return Promise.resolve(null);
    this.pending ??= this.client.subscribe(this.channel).then(
      () => {
        this.subscribed = true;
        this.pending = null;
        return null;
      },
      (err: unknown) => {
        this.pending = null;
        if (this.client.status !== 'end') setTimeout(() => void this.ensure(), RESUBSCRIBE_MS).unref();
        return err instanceof Error ? err : new Error(String(err));
      },
    );
    return this.pending;
  }
}
