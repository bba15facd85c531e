import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { STREAM_PATH } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import type { Clock } from '../domain/clock.js';
import type { Authenticator } from '../http/auth.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { EventLog, StoredEvent } from '../store/events.js';
import { Connection, Liveness, PING_SLOTS, Writer } from './connection.js';
import type { SlotCounter } from '../bus/slots.js';
import type { StreamFilter } from './filter.js';
import { readHandshake, refuse, type Handshake } from './handshake.js';
import { Hub } from './hub.js';
import { STREAM_LIMITS, type StreamLimits } from './limits.js';
import { SvcError } from '../domain/errors.js';
import { asSvcError, CLOSE, errorFrame, isErrorFrame, parseClientMessage, validateSubscriptions, type Subscriptions } from './protocol.js';
import { readReplay } from './replay.js';
import { Sequencer } from './sequencer.js';

export { STREAM_LIMITS } from './limits.js';
export { CLOSE } from './protocol.js';

export interface GatewayDeps {
  auth: Authenticator;
  /** Which of these key ids are still valid (exist, not revoked): one batched store read. */
  activeKeys: (keyIds: readonly string[]) => Promise<Set<string>>;
  /** The key's request budget: an upgrade is one request, a replay one more per page it reads. */
  limiter: RateLimiter;
  bus: EventBus;
  events: EventLog;
  counter: SlotCounter;
  clock: Clock;
  leagueSport: (league: string) => Promise<string | undefined>;
  limits?: Partial<StreamLimits>;
}

/**
 * The WebSocket stream, in the parts centrifuge has: the handshake (handshake.ts: key, rate
 * limit, product and parameters checked before the upgrade), the protocol (protocol.ts: client
 * messages, control frames, close codes), the hub (hub.ts: subscribers indexed by game, league
 * and sport) and the connection (connection.ts: outbox, corked writes, heartbeats and pings, the
 * replay-then-live handoff). This class wires them to the HTTP server and the bus.
 *
 * Each event is serialised and framed once per broadcast (frames.ts: eventFrame), and those bytes
 * are written as they are to every matching socket: per subscriber a broadcast costs one socket
 * write, with no WebSocket framing or copying of its own.
 */
export class StreamGateway {
  // No permessage-deflate: the pre-built frames are written to the sockets as they are (see Connection.raw).
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
  private readonly limits: StreamLimits;
  private readonly hub: Hub<Connection>;
  private readonly writer: Writer;
  private readonly liveness: Liveness;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => undefined;
  private checkingKeys = false;
  /** Set by close(): upgrades still arriving are refused, or closed as soon as they open. */
  private closing = false;
  /** Gives each connection's slot back to the connection counter when it goes. */
  private readonly tokens = new WeakMap<Connection, () => void>();

  constructor(private readonly deps: GatewayDeps) {
    this.limits = { ...STREAM_LIMITS, ...deps.limits };
    this.hub = new Hub(this.limits);
    const drop = (c: Connection) => this.drop(c);
    this.writer = new Writer(deps.clock, this.limits.maxBufferedBytes, drop);
    this.liveness = new Liveness(this.writer, this.limits.heartbeatMs, drop);
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== STREAM_PATH) {
        socket.destroy();
        return;
      }
      if (this.closing) {
        refuse(socket, new SvcError('draining', 'This node is shutting down; connect again to reach another node.'));
        return;
      }
      void this.handleUpgrade(req, socket, head, url);
    });
    const sequencer = new Sequencer(
      (events) => this.broadcast(events),
      (after, before) => this.deps.events.after(after, this.limits.replayMaxEvents, { below: before }),
      this.limits.reorderHoldMs,
    );
    const off = this.deps.bus.subscribe((events) => sequencer.push(events));
    // Back from an outage: what other nodes appended meanwhile is read from the store, so a
    // connected client loses nothing even when no later event comes to show the hole.
    const offResume = this.deps.bus.onResume(() => {
      this.deps.events.lastSeq().then(
        (head) => sequencer.catchUp(head),
        () => undefined,
      );
    });
    this.unsubscribe = () => {
      off();
      offResume();
      sequencer.close();
    };
    this.deps.events.lastSeq().then(
      (seq) => sequencer.start(seq),
      () => sequencer.start(0),
    );
    const beat = setInterval(() => this.liveness.heartbeat(this.hub, this.deps.clock.now()), 1000);
    const ping = setInterval(() => this.liveness.ping(this.hub), this.limits.pingMs / PING_SLOTS);
    const keys = setInterval(() => void this.checkKeys(), this.limits.keyCheckMs);
    for (const t of [beat, ping, keys]) {
      t.unref();
      this.timers.push(t);
    }
  }

  get connections(): number {
    return this.hub.size;
  }

  /**
   * Closes every stream with 1001 (clients resume on another node with `since`) and resolves once
   * their sockets are gone: the HTTP server's close waits for them. A client that has not
   * answered the close frame within `graceMs` is cut off.
   */
  async close(graceMs = 2_000): Promise<void> {
    this.closing = true;
    this.unsubscribe();
    for (const t of this.timers) clearInterval(t);
    // What was queued before the shutdown still goes out, ahead of the close frame.
    this.writer.flushAll();
    const open = [...this.hub];
    const gone = open.map((c) => new Promise<void>((resolve) => (c.socket.readyState === c.socket.CLOSED ? resolve() : c.socket.once('close', () => resolve()))));
    for (const c of open) c.socket.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const c of open) {
      c.socket.terminate();
      this.drop(c);
    }
    this.wss.close();
  }

  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let hs: Handshake;
    let filter: StreamFilter;
    try {
      hs = await readHandshake(req, url, {
        auth: this.deps.auth,
        limiter: this.deps.limiter,
        leagueSport: this.deps.leagueSport,
        maxSubscriptionsPerSocket: this.limits.maxSubscriptionsPerSocket,
      });
      filter = {
        everything: true,
        sports: new Set(),
        leagues: new Set(),
        games: new Set(),
        tier: hs.tier,
        types: hs.types,
        scopeSports: hs.principal.sports,
        scopeLeagues: hs.principal.leagues,
        viewerKeyId: hs.principal.keyId,
      };
      // No await between this and the upgrade's end: the key's share is held from here.
      this.hub.admit(hs.principal.keyId, filter, hs.requested);
    } catch (err) {
      refuse(socket, asSvcError(err));
      return;
    }
    const { principal, since } = hs;

    const token = await this.deps.counter.acquire(principal.keyId, principal.plan.streamConnections).catch(() => null);
    // ws calls back only for a completed handshake; one it refuses (bad version, key, method) or a
    // peer gone meanwhile just ends the socket. The slot then goes back with the socket, not never.
    let upgraded = false;
    const giveBack = () => {
      if (upgraded) return;
      this.hub.release(principal.keyId, filter);
      if (token) void this.deps.counter.release(principal.keyId, token);
    };
    if (socket.destroyed) {
      giveBack();
      return;
    }
    socket.once('close', giveBack);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      socket.off('close', giveBack);
      if (!token) {
        this.hub.release(principal.keyId, filter);
        ws.close(CLOSE.connectionLimit.code, CLOSE.connectionLimit.reason);
        return;
      }
      if (this.closing) {
        this.hub.release(principal.keyId, filter);
        void this.deps.counter.release(principal.keyId, token);
        ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
        return;
      }
      const c = new Connection(ws, socket, principal, filter, this.liveness.slot(), this.writer, since, this.deps.clock.now());
      this.hub.add(c);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        void this.deps.counter.release(principal.keyId, token);
      };
      this.tokens.set(c, release);
      ws.on('pong', () => {
        c.alive = true;
      });
      ws.on('message', (data, isBinary) => c.receive(isBinary ? '' : data.toString(), (text) => this.onMessage(c, text)));
      ws.on('close', () => this.drop(c));
      ws.on('error', () => this.drop(c));
      void this.start(c, since);
    });
  }

  private drop(c: Connection): void {
    if (this.hub.remove(c)) this.tokens.get(c)?.();
  }

  private async start(c: Connection, since: number | null): Promise<void> {
    const describe = (f: StreamFilter) => ({ sports: [...f.sports], leagues: [...f.leagues], games: [...f.games], tier: f.tier });
    if (since === null) {
      c.goLive({ type: 'subscribed', recovered: false, ...describe(c.filter) }, []);
      return;
    }
    // Live events queue in the connection while the replay is read and sent (Connection.goLive).
    let recovered = false;
    let replay: StoredEvent[] = [];
    const anchor = since === 0 ? null : await this.deps.events.get(`evt_${since}`).catch(() => undefined);
    const inWindow = since === 0 || (anchor !== undefined && anchor !== null && this.deps.clock.now() - Date.parse(anchor.event.ts) <= this.limits.replayWindowMs);
    if (inWindow) {
      try {
        replay = await readReplay(this.deps, c.principal, c.filter, since, this.limits.replayMaxEvents);
      } catch (err) {
        // Over the key's rate limit mid-replay: nothing of it is sent; resume after Retry-After.
        const e = asSvcError(err);
        const retryAfter = Number(e.headers['Retry-After']);
        c.control({ type: 'error', code: e.code, message: e.message, ...(retryAfter ? { retry_after: retryAfter } : {}) });
        this.writer.flushNow(c);
        const close = e.code === 'rate_limited' ? CLOSE.rateLimited : CLOSE.replayFailed;
        c.socket.close(close.code, close.reason);
        this.drop(c);
        return;
      }
      recovered = replay.length <= this.limits.replayMaxEvents;
    }
    c.goLive({ type: 'subscribed', recovered, ...describe(c.filter) }, recovered ? replay : []);
  }

  private broadcast(events: StoredEvent[]): void {
    for (const e of events) this.hub.forEachMatch(e, (c) => c.offer(e));
  }

  /**
   * A key is resolved once at the upgrade, so a revocation must reach the sockets it opened: every
   * keyCheckMs the keys of all open sockets are re-read in one query, straight from the store (not
   * through the authenticator's cache), on every node. Sockets of a key that is gone or revoked
   * are closed with 4401, and the node's cached principal is dropped with them.
   */
  private async checkKeys(): Promise<void> {
    if (this.checkingKeys || this.hub.size === 0) return;
    this.checkingKeys = true;
    try {
      const ids = [...new Set([...this.hub].map((c) => c.principal.keyId))];
      const active = await this.deps.activeKeys(ids);
      const revoked = new Set(ids.filter((id) => !active.has(id)));
      if (revoked.size === 0) return;
      for (const id of revoked) this.deps.auth.forgetKey(id);
      for (const c of [...this.hub]) {
        if (!revoked.has(c.principal.keyId)) continue;
        c.socket.close(CLOSE.keyRevoked.code, CLOSE.keyRevoked.reason);
        this.drop(c);
      }
    } catch {
      // The store is unreachable: keep the sockets, the next round checks again.
    } finally {
      this.checkingKeys = false;
    }
  }

  private async onMessage(c: Connection, text: string): Promise<void> {
    const msg = parseClientMessage(text);
    if (isErrorFrame(msg)) {
      c.control(msg);
      return;
    }
    if (msg.op === 'ping') {
      c.control({ type: 'pong' });
      return;
    }
    try {
      const listed: Subscriptions = { sports: msg.sports, leagues: msg.leagues, games: msg.games };
      let changed: Subscriptions;
      if (msg.op === 'subscribe') {
        const valid = await validateSubscriptions(c.principal, listed, this.deps.leagueSport, this.limits.maxSubscriptionsPerSocket);
        if (!this.hub.has(c)) return;
        changed = this.hub.admit(c.principal.keyId, c.filter, valid, c);
      } else changed = this.hub.withdraw(c, listed);
      // Only what this message changed: echoing the whole set made every message cost its size.
      c.control({ type: 'subscribed', recovered: false, op: msg.op, ...changed, tier: c.filter.tier });
    } catch (err) {
      c.control(errorFrame(asSvcError(err)));
    }
  }
}
