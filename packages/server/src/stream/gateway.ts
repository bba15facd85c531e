import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { EVENT_STREAM_TYPE, STREAM_PATH, eventId } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoDate, type Clock } from '../domain/clock.js';
import type { Authenticator } from '../http/auth.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { EventLog, StoredEvent } from '../store/events/events.js';
import { Connection, Liveness, PING_SLOTS, Writer } from './connection.js';
import type { SlotCounter } from '../bus/slots.js';
import type { StreamFilter } from './filter.js';
import { addressCounter, readHandshake, refuse, type Handshake } from './handshake.js';
import { Hub } from './hub.js';
import { STREAM_LIMITS, type StreamLimits } from './limits.js';
import { SvcError, invalid } from '../domain/errors.js';
import { asSvcError, CLOSE, errorFrame, isErrorFrame, parseClientMessage, validateSubscriptions, type Subscriptions } from './protocol.js';
import { planReplay, type Replay } from './replay.js';
import { Sequencer } from './sequencer.js';
import { SSE_RETRY_MS } from './frames.js';
import type { StreamTokens } from './tokens.js';
import { EventStreamTransport, WebSocketTransport } from './transport.js';

/** How long the stream waits before asking the store again for its starting point. */
const START_RETRY_MS = 500;

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
  /** The node got SIGTERM: from that moment no new stream is taken (docs/operations.md, "Drain"). */
  draining?: () => boolean;
  /** Opens the stream tokens presented as `?token=` (tokens.ts). */
  tokens: StreamTokens;
  limits?: Partial<StreamLimits>;
}

/** The connection slots a stream holds (StreamGateway.takeSlots), given back once. */
interface HeldSlots {
  release: () => void;
}

/** Whether a request's Accept header asks for an event stream. */
export function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? '')
    .split(',')
    .some((part) => part.split(';')[0].trim().toLowerCase() === EVENT_STREAM_TYPE);
}

/**
 * The stream, in the parts centrifuge has: the handshake (handshake.ts: key or stream token, rate
 * limit, product and parameters checked before anything is upgraded or streamed), the protocol
 * (protocol.ts: client messages, control frames, close codes), the hub (hub.ts: subscribers
 * indexed by game, league and sport), the connection (connection.ts: outbox, corked writes,
 * heartbeats and pings, the replay-then-live handoff, the broadcast delay) and the transport
 * (transport.ts: a WebSocket, or a server-sent event stream). This class wires them to the HTTP
 * server and the bus: one gateway, one hub and one sequencer for both transports.
 *
 * Each event is serialised once per broadcast and framed once per transport (frames.ts), and those
 * bytes are written as they are to every matching connection: per subscriber a broadcast costs one
 * socket write, with no framing or copying of its own.
 */
export class StreamGateway {
  // No permessage-deflate: the pre-built frames are written to the sockets as they are (see WebSocketTransport).
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
  private readonly slots = new WeakMap<Connection, () => void>();

  constructor(private readonly deps: GatewayDeps) {
    this.limits = { ...STREAM_LIMITS, ...deps.limits };
    this.hub = new Hub(this.limits);
    const drop = (c: Connection) => this.drop(c);
    this.writer = new Writer(deps.clock, this.limits.maxBufferedBytes, drop, this.limits.replayMaxEvents, this.limits.replayStallMs, (c) => this.hub.has(c));
    this.liveness = new Liveness(this.writer, drop);
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== STREAM_PATH) {
        socket.destroy();
        return;
      }
      if (this.closing || this.deps.draining?.()) {
        refuse(socket, new SvcError('draining', 'This node is shutting down; connect again to reach another node.'));
        return;
      }
      void this.handleUpgrade(req, socket, head, url);
    });
    const sequencer = new Sequencer(
      (events) => this.broadcast(events),
      (after, before) => this.deps.events.after(after, this.limits.replayMaxEvents, { below: before }),
      this.limits.reorderHoldMs,
      this.limits.replayMaxEvents,
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
    // The starting point is the store's last seq. Read again until it is answered: starting from 0
    // instead (as when the first read failed on a busy database) would take every stored event
    // for a hole and send the whole history to every stream client. Events the bus carries
    // meanwhile are held by the sequencer.
    const startFromStore = (): void => {
      if (this.closing) return;
      this.deps.events.lastSeq().then(
        (seq) => sequencer.start(seq),
        () => setTimeout(startFromStore, START_RETRY_MS).unref(),
      );
    };
    startFromStore();
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

  /** Bytes written to the open connections' sockets that the kernel has not taken yet (docs/stream.md "Limits"). */
  get unsentBytes(): number {
    let n = 0;
    for (const c of this.hub) n += c.transport.buffered;
    return n;
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
    const gone = open.map((c) => c.transport.closed);
    for (const c of open) c.transport.close('shuttingDown');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const c of open) {
      c.transport.terminate();
      this.drop(c);
    }
    this.wss.close();
  }

  /**
   * The checks both transports share (handshake.ts), then the request's subscriptions admitted to
   * the hub's caps. No await between the admission and the caller's next step: the key's share is
   * held from here, and the caller gives it back if the connection never opens.
   */
  private async prepare(req: IncomingMessage, url: URL, eventStream: boolean): Promise<{ hs: Handshake; filter: StreamFilter }> {
    const lastEventId = eventStream ? req.headers['last-event-id'] : undefined;
    const hs = await readHandshake(
      req,
      url,
      {
        auth: this.deps.auth,
        limiter: this.deps.limiter,
        leagueSport: this.deps.leagueSport,
        maxSubscriptionsPerSocket: this.limits.maxSubscriptionsPerSocket,
        tokens: this.deps.tokens,
        now: () => this.deps.clock.now(),
      },
      typeof lastEventId === 'string' ? lastEventId : undefined,
    );
    if (eventStream && !acceptsEventStream(req.headers.accept)) {
      throw new SvcError('upgrade_required', 'GET /v1/stream is a WebSocket (Connection: Upgrade) or an event stream (Accept: text/event-stream).');
    }
    // An id past the log's head was never issued: a resume after it would skip every event up to
    // it, for ever, so it is refused rather than taken (docs/stream.md "Resume").
    if (hs.since !== null && hs.since > 0 && hs.since > (await this.deps.events.lastSeq())) {
      throw invalid('invalid_parameter', `'${hs.sinceParam}' names an event that does not exist: resume with the id of the last event received.`, hs.sinceParam);
    }
    const filter: StreamFilter = {
      everything: true,
      sports: new Set(),
      leagues: new Set(),
      games: new Set(),
      tier: hs.tier,
      types: hs.types,
      scopeSports: hs.principal.sports,
      scopeLeagues: hs.principal.leagues,
      scopeGames: hs.scopeGames,
      viewerKeyId: hs.principal.keyId,
      minProbability: hs.minProbability,
      retractionFloor: hs.minProbability,
    };
    this.hub.admit(hs.principal.keyId, filter, hs.requested);
    return { hs, filter };
  }

  /** A connection that opened: into the hub, its slots given back when it goes, its token's expiry armed, then its replay and live events. */
  private open(c: Connection, hs: Handshake, slots: HeldSlots): void {
    this.hub.add(c);
    this.slots.set(c, slots.release);
    if (hs.expiresAt !== null) c.expireAt(hs.expiresAt, () => this.expire(c));
    void this.start(c, hs.since);
  }

  /**
   * The connection slots a stream holds, counted across the cluster: one of its key's (the plan's
   * limit) and, for a stream token that limits each client address (the sandbox demo's), one of
   * its address's, taken first, so one client cannot hold all of the key's connections (docs/
   * stream.md "A scoreboard in a public page"). The refusal when either is full.
   */
  private async takeSlots(hs: Handshake): Promise<HeldSlots | SvcError> {
    const { principal, perAddress } = hs;
    const counter = this.deps.counter;
    const byAddress = addressCounter(principal.keyId, hs.address);
    const addressSlot = perAddress ? await counter.acquire(byAddress, perAddress.connections).catch(() => null) : null;
    if (perAddress && !addressSlot) {
      return new SvcError('connection_limit', `This client address holds the ${perAddress.connections} streams a visitor may have open with this page's tokens; close one before opening another.`);
    }
    const releaseAddress = () => {
      if (addressSlot) void counter.release(byAddress, addressSlot);
    };
    const slot = await counter.acquire(principal.keyId, principal.plan.streamConnections).catch(() => null);
    if (!slot) {
      releaseAddress();
      return new SvcError('connection_limit', `The plan's ${principal.plan.streamConnections} stream connections are all open; close one before opening another.`);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        void counter.release(principal.keyId, slot);
        releaseAddress();
      },
    };
  }

  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let hs: Handshake;
    let filter: StreamFilter;
    try {
      ({ hs, filter } = await this.prepare(req, url, false));
    } catch (err) {
      refuse(socket, asSvcError(err));
      return;
    }
    const { principal } = hs;

    const slots = await this.takeSlots(hs);
    // ws calls back only for a completed handshake; one it refuses (bad version, key, method) or a
    // peer gone meanwhile just ends the socket. The slot then goes back with the socket, not never.
    let upgraded = false;
    const giveBack = () => {
      if (upgraded) return;
      this.hub.release(principal.keyId, filter);
      if (!(slots instanceof SvcError)) slots.release();
    };
    if (socket.destroyed) {
      giveBack();
      return;
    }
    // SIGTERM came while the key was checked: still refused before the upgrade.
    if (this.closing || this.deps.draining?.()) {
      giveBack();
      refuse(socket, new SvcError('draining', 'This node is shutting down; connect again to reach another node.'));
      return;
    }
    socket.once('close', giveBack);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      socket.off('close', giveBack);
      if (slots instanceof SvcError) {
        this.hub.release(principal.keyId, filter);
        ws.close(CLOSE.connectionLimit.code, CLOSE.connectionLimit.reason);
        return;
      }
      if (this.closing) {
        this.hub.release(principal.keyId, filter);
        slots.release();
        ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
        return;
      }
      const c = new Connection(new WebSocketTransport(ws, socket, this.limits.heartbeatMs), principal, filter, this.liveness.slot(), this.writer, hs.since, this.deps.clock, hs.delayMs);
      ws.on('message', (data, isBinary) => c.receive(isBinary ? '' : data.toString(), (text) => this.onMessage(c, text)));
      ws.on('close', () => this.drop(c));
      ws.on('error', () => this.drop(c));
      this.open(c, hs, slots);
    });
  }

  /**
   * An event-stream request (`Accept: text/event-stream`, docs/stream.md "Server-sent events"):
   * checked like an upgrade (same handshake, same caps, same connection slot), and refused with
   * the JSON error body when it cannot be served: over the plan's connections it is a 429
   * `connection_limit` rather than a stream that ends at once, which EventSource would reopen in a
   * loop. Resolves to what starts the stream once the caller has taken the socket from the HTTP
   * framework (nothing is written before).
   */
  async openEventStream(req: IncomingMessage, requestId: string): Promise<() => void> {
    if (this.closing || this.deps.draining?.()) throw new SvcError('draining', 'This node is shutting down; connect again to reach another node.');
    const url = new URL(req.url ?? '/', 'http://x');
    const { hs, filter } = await this.prepare(req, url, true);
    const { principal } = hs;
    const slots = await this.takeSlots(hs);
    const draining = this.closing || this.deps.draining?.() === true;
    if (slots instanceof SvcError || draining) {
      this.hub.release(principal.keyId, filter);
      if (!(slots instanceof SvcError)) slots.release();
      if (slots instanceof SvcError) throw slots;
      throw new SvcError('draining', 'This node is shutting down; connect again to reach another node.');
    }
    return () => {
      const socket: Socket = req.socket;
      if (socket.destroyed || !socket.writable) {
        this.hub.release(principal.keyId, filter);
        slots.release();
        return;
      }
      // The stream is long-lived: the HTTP server's idle timeout must not cut it (heartbeats keep it busy anyway).
      socket.setTimeout(0);
      socket.setNoDelay(true);
      socket.write(
        'HTTP/1.1 200 OK\r\n' +
          `Content-Type: ${EVENT_STREAM_TYPE}; charset=utf-8\r\n` +
          'Cache-Control: no-cache, no-store, no-transform\r\n' +
          'X-Accel-Buffering: no\r\n' +
          // Credentials travel in the URL (a stream token) or a header, never in cookies, so any page may read it.
          'Access-Control-Allow-Origin: *\r\n' +
          'X-Content-Type-Options: nosniff\r\n' +
          `X-Request-Id: ${requestId}\r\n` +
          // The body ends with the connection: no length, no chunk framing around each message.
          'Connection: close\r\n\r\n' +
          `retry: ${SSE_RETRY_MS}\n\n`,
      );
      const c = new Connection(new EventStreamTransport(socket, this.limits.sseHeartbeatMs), principal, filter, this.liveness.slot(), this.writer, hs.since, this.deps.clock, hs.delayMs);
      socket.on('close', () => this.drop(c));
      socket.on('error', () => this.drop(c));
      this.open(c, hs, slots);
    };
  }

  /** The connection's stream token expired: what is queued goes out, then the close (4403). */
  private expire(c: Connection): void {
    if (!this.hub.has(c)) return;
    this.writer.flushNow(c);
    c.transport.close('tokenExpired');
    this.drop(c);
  }

  private drop(c: Connection): void {
    c.dispose();
    if (this.hub.remove(c)) this.slots.get(c)?.();
  }

  /**
   * The connection's first frames: `subscribed`, then its resume when it asked for one, then live
   * events (docs/stream.md "Resume"). A resume is promised (`recovered: true`) only from an event
   * inside the resume window (`replayWindowMs` by its `ts`; `since=evt_0` names none) and when at
   * most `replayMaxEvents` events the key may read follow it; otherwise nothing is replayed.
   */
  private async start(c: Connection, since: number | null): Promise<void> {
    const describe = (f: StreamFilter) => ({ sports: [...f.sports], leagues: [...f.leagues], games: [...f.games], tier: f.tier, min_probability: f.minProbability });
    if (since === null) {
      void c.goLive({ type: 'subscribed', recovered: false, ...describe(c.filter) });
      return;
    }
    // Live events queue in the connection while the replay is read and sent (Connection.goLive).
    let replay: Replay | null = null;
    try {
      const anchor = since === 0 ? undefined : await this.deps.events.get(eventId(since));
      const inWindow = anchor !== undefined && this.deps.clock.now() - Date.parse(anchor.event.ts) <= this.limits.replayWindowMs;
      if (inWindow) replay = await planReplay(this.deps, c.principal, c.filter, since, this.limits.replayMaxEvents, isoDate(this.deps.clock.now()));
    } catch (err) {
      // Over the key's rate limit: nothing of the replay is sent; resume after Retry-After.
      this.endReplay(c, err);
      return;
    }
    try {
      await c.goLive({ type: 'subscribed', recovered: replay !== null, ...describe(c.filter) }, replay?.pages());
    } catch (err) {
      // The store failed in the middle: what was sent is in order, so the client resumes from the last id it saw.
      this.endReplay(c, err);
    }
  }

  /** A resume that cannot go on: an error frame, then the close (4429 when rate limited, else 1011 replay_failed). */
  private endReplay(c: Connection, err: unknown): void {
    if (!this.hub.has(c)) return;
    const e = asSvcError(err);
    const retryAfter = Number(e.headers['Retry-After']);
    c.control({ type: 'error', code: e.code, message: e.message, ...(retryAfter ? { retry_after: retryAfter } : {}) });
    this.writer.flushNow(c);
    c.transport.close(e.code === 'rate_limited' ? 'rateLimited' : 'replayFailed');
    this.drop(c);
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
    const now = this.deps.clock.now();
    for (const c of [...this.hub]) if (c.expiresAt !== null && c.expiresAt <= now) this.expire(c);
    this.checkingKeys = true;
    try {
      const ids = [...new Set([...this.hub].map((c) => c.principal.keyId))];
      const active = await this.deps.activeKeys(ids);
      const revoked = new Set(ids.filter((id) => !active.has(id)));
      if (revoked.size === 0) return;
      for (const id of revoked) this.deps.auth.forgetKey(id);
      for (const c of [...this.hub]) {
        if (!revoked.has(c.principal.keyId)) continue;
        c.transport.close('keyRevoked');
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
        const valid = await validateSubscriptions(c.principal, listed, this.deps.leagueSport, this.limits.maxSubscriptionsPerSocket, c.filter.scopeGames);
        if (!this.hub.has(c)) return;
        changed = this.hub.admit(c.principal.keyId, c.filter, valid, c);
      } else changed = this.hub.withdraw(c, listed);
      if (msg.op === 'subscribe' && msg.min_probability !== undefined) {
        c.filter.minProbability = msg.min_probability;
        c.filter.retractionFloor = Math.min(c.filter.retractionFloor, msg.min_probability);
      }
      // Only what this message changed: echoing the whole set made every message cost its size.
      c.control({ type: 'subscribed', recovered: false, op: msg.op, ...changed, tier: c.filter.tier, min_probability: c.filter.minProbability });
    } catch (err) {
      c.control(errorFrame(asSvcError(err)));
    }
  }
}
