import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SPORTS } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import type { Clock } from '../domain/clock.js';
import { SvcError, invalid } from '../domain/errors.js';
import { randomBase62 } from '../domain/keys.js';
import { requireProduct, requireScope, type Principal } from '../domain/scopes.js';
import { errorBody, toSvcError } from '../http/errors.js';
import { meter, type Authenticator } from '../http/auth.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { eventSeq } from '../store/competitions.js';
import type { EventLog, StoredEvent } from '../store/events.js';
import type { ConnectionCounter } from './connection-counter.js';
import { matches, type StreamFilter } from './filter.js';
import { eventFrame, textFrame } from './frames.js';
import { Sequencer } from './sequencer.js';

export const STREAM_LIMITS = {
  heartbeatMs: 5_000,
  pingMs: 15_000,
  maxBufferedBytes: 1024 * 1024,
  replayMaxEvents: 10_000,
  replayWindowMs: 24 * 3600 * 1000,
  /** How often the keys of open sockets are re-read from the store (revocation reaches them within this). */
  keyCheckMs: 2_000,
  /** How long an event that arrived ahead of a lower seq waits for it before the gap is read from the store. */
  reorderHoldMs: 200,
  /** Sports, leagues and games one socket may subscribe to, all counted. */
  maxSubscriptionsPerSocket: 1_000,
  /** The same, summed over all the sockets of one key on this node. */
  maxSubscriptionsPerKey: 5_000,
};

/** Close codes of the stream besides the standard ones (README, "Live: reports, consensus, stream"). */
export const CLOSE = {
  keyRevoked: { code: 4401, reason: 'key_revoked' },
  rateLimited: { code: 4429, reason: 'rate_limited' },
} as const;

const QUERY_PARAMS = new Set(['sport', 'league', 'game', 'tier', 'since', 'access_token']);

interface Subscriber {
  socket: WebSocket;
  /**
   * The TCP socket under `socket`. Queued frames are written to it directly: they are complete,
   * pre-built frames (frames.ts), and `ws` writes its own frames (ping, pong, close) straight to
   * the same socket without queueing (no permessage-deflate), so frames never interleave.
   */
  raw: Duplex;
  /** Complete frames waiting for the next flush, in order (events and control frames alike). */
  outbox: Buffer[];
  principal: Principal;
  filter: StreamFilter;
  /** Live events queued while the resume replay is being sent; null once live. */
  pending: StoredEvent[] | null;
  /** Seq of the last event queued to this socket: frames only ever go up (see deliver). */
  lastSeq: number;
  /** The client's messages, handled one after another (see receive). */
  inbox: Promise<void>;
  inboxLength: number;
  lastSentAt: number;
  alive: boolean;
  /** Which tick of the ping round pings this subscriber (see PING_SLOTS). */
  pingSlot: number;
  release: () => void;
}

export interface GatewayDeps {
  auth: Authenticator;
  /** Which of these key ids are still valid (exist, not revoked): one batched store read. */
  activeKeys: (keyIds: readonly string[]) => Promise<Set<string>>;
  /** The key's request budget: an upgrade is one request, a replay one more per page it reads. */
  limiter: RateLimiter;
  bus: EventBus;
  events: EventLog;
  counter: ConnectionCounter;
  clock: Clock;
  leagueSport: (league: string) => Promise<string | undefined>;
  limits?: Partial<typeof STREAM_LIMITS>;
}

interface Subscriptions {
  sports: string[];
  leagues: string[];
  games: string[];
}

const listed = (s: Subscriptions): number => s.sports.length + s.leagues.length + s.games.length;
const held = (f: StreamFilter): number => f.sports.size + f.leagues.size + f.games.size;

const json = (v: unknown) => JSON.stringify(v);
const csv = (v: string | null): string[] => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

/** Client messages waiting to be handled before the socket stops being read. */
const MAX_INBOX = 32;
/** Rows per replay read: a resume of the whole cap is a handful of bounded queries, not one huge one. */
const REPLAY_PAGE = 1000;
/** Subscribers flushed per event-loop turn: HTTP requests get a turn between slices of a big fan-out. */
const FLUSH_SLICE = 1000;
/**
 * Each subscriber is pinged once per pingMs, but not all in the same turn: a round is split into
 * this many ticks and a subscriber belongs to one of them (round-robin by arrival). Pinging
 * 10,000 sockets at once is ~130 ms of writes and then 10,000 pongs to read, and events published
 * meanwhile waited for all of it (bench/stream, 10,000 subscribers: max latency ~700 ms).
 */
const PING_SLOTS = 16;
/** A flush that ended at least this recently means frames are flowing: coalesce rather than write at once. */
const BUSY_WITHIN_MS = 1;

/**
 * The WebSocket stream: authenticates before the upgrade, replays from `since`, then fans out
 * live events from the bus. Each event is serialised and framed once per broadcast (eventFrame),
 * and those bytes are written as they are to every socket: per subscriber a broadcast costs one
 * socket write, with no WebSocket framing or copying of its own.
 *
 * Frames are not written to a socket one by one: they queue in the subscriber's outbox and a
 * flush writes each outbox with the TCP socket corked. When frames are flowing the flush waits
 * for the next event-loop turn, so a burst of N events to a subscriber costs one write syscall
 * instead of N, which is what lets one core keep up with thousands of subscribers
 * (bench/stream); when idle it runs at once, for latency. Control frames take the same queue,
 * so a client sees every frame in the order the gateway produced it.
 */
export class StreamGateway {
  // No permessage-deflate: the pre-built frames are written to the sockets as they are (see Subscriber.raw).
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
  private readonly subscribers = new Set<Subscriber>();
  private readonly limits: typeof STREAM_LIMITS;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => undefined;
  private heartbeatFrame = textFrame(Buffer.from(json({ type: 'heartbeat' })));
  /** Subscribers with a non-empty outbox, in the order they got their first queued frame. */
  private dirty: Subscriber[] = [];
  private flushScheduled = false;
  /** When the last flush (all its slices) ended and how long it took: see send. */
  private lastFlushEnd = -Infinity;
  private lastFlushMs = 0;
  private flushStart: number | null = null;
  private nextPingSlot = 0;
  private pingTick = 0;
  private checkingKeys = false;
  /** Subscriptions held per key over its sockets (maxSubscriptionsPerKey). */
  private readonly keyLoad = new Map<string, number>();

  constructor(private readonly deps: GatewayDeps) {
    this.limits = { ...STREAM_LIMITS, ...deps.limits };
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== '/v1/stream') {
        socket.destroy();
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
    this.unsubscribe = () => {
      off();
      sequencer.close();
    };
    this.deps.events.lastSeq().then(
      (seq) => sequencer.start(seq),
      () => sequencer.start(0),
    );
    const beat = setInterval(() => this.heartbeat(), 1000);
    const ping = setInterval(() => this.ping(), this.limits.pingMs / PING_SLOTS);
    const keys = setInterval(() => void this.checkKeys(), this.limits.keyCheckMs);
    for (const t of [beat, ping, keys]) {
      t.unref();
      this.timers.push(t);
    }
  }

  get connections(): number {
    return this.subscribers.size;
  }

  async close(): Promise<void> {
    this.unsubscribe();
    for (const t of this.timers) clearInterval(t);
    // What was queued before the shutdown still goes out, ahead of the close frame.
    const now = this.deps.clock.now();
    for (const sub of this.dirty.splice(0)) this.writeOrDrop(sub, now);
    for (const s of this.subscribers) s.socket.close(1001, 'server shutting down');
    this.subscribers.clear();
    this.wss.close();
  }

  private refuse(socket: Duplex, e: SvcError): void {
    const body = json(errorBody(e, `req_${randomBase62(20)}`));
    const headers = Object.entries(e.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(
      `HTTP/1.1 ${e.status} ${e.type}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let principal: Principal;
    let filter: StreamFilter;
    let since: number | null;
    try {
      const header = req.headers.authorization;
      const bearer = header ? (/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? header) : undefined;
      principal = await this.deps.auth.authenticate(bearer ?? url.searchParams.get('access_token') ?? undefined);
      await meter(this.deps.limiter, principal);
      requireProduct(principal, 'live');
      for (const name of url.searchParams.keys()) {
        if (!QUERY_PARAMS.has(name)) throw invalid('unknown_parameter', `Unknown parameter '${name}'.`, name);
      }
      filter = {
        everything: true,
        sports: new Set(),
        leagues: new Set(),
        games: new Set(),
        tier: null,
        scopeSports: principal.sports,
        scopeLeagues: principal.leagues,
      };
      const requested = await this.validate(principal, {
        sports: csv(url.searchParams.get('sport')),
        leagues: csv(url.searchParams.get('league')),
        games: csv(url.searchParams.get('game')),
      });
      const tier = url.searchParams.get('tier');
      if (tier !== null) {
        if (tier !== 'provisional' && tier !== 'confirmed') throw invalid('invalid_parameter', "'tier' must be provisional or confirmed.", 'tier');
        filter.tier = tier;
      }
      const sinceRaw = url.searchParams.get('since');
      since = sinceRaw === null ? null : (eventSeq(sinceRaw) ?? null);
      if (sinceRaw !== null && since === null) throw invalid('invalid_parameter', "'since' must be an event id (evt_…).", 'since');
      // Last, and with no await after it: the key's share is held from here (see unload).
      this.admit(principal.keyId, filter, requested);
    } catch (err) {
      this.refuse(socket, err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err))));
      return;
    }

    const token = await this.deps.counter.acquire(principal.keyId, principal.plan.streamConnections).catch(() => null);
    // ws calls back only for a completed handshake; one it refuses (bad version, key, method) or a
    // peer gone meanwhile just ends the socket. The slot then goes back with the socket, not never.
    let upgraded = false;
    const unload = () => this.load(principal.keyId, -held(filter));
    const giveBack = () => {
      if (upgraded) return;
      unload();
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
        unload();
        ws.close(4029, 'connection limit of the plan reached');
        return;
      }
      const sub: Subscriber = {
        socket: ws,
        raw: socket,
        outbox: [],
        principal,
        filter,
        pending: since === null ? null : [],
        lastSeq: since ?? 0,
        inbox: Promise.resolve(),
        inboxLength: 0,
        lastSentAt: this.deps.clock.now(),
        alive: true,
        pingSlot: this.nextPingSlot++ % PING_SLOTS,
        release: () => {
          this.load(principal.keyId, -held(filter));
          void this.deps.counter.release(principal.keyId, token);
        },
      };
      this.subscribers.add(sub);
      ws.on('pong', () => {
        sub.alive = true;
      });
      ws.on('message', (data, isBinary) => this.receive(sub, isBinary ? '' : data.toString()));
      ws.on('close', () => this.drop(sub));
      ws.on('error', () => this.drop(sub));
      void this.start(sub, since);
    });
  }

  private drop(sub: Subscriber): void {
    if (this.subscribers.delete(sub)) sub.release();
  }

  private async start(sub: Subscriber, since: number | null): Promise<void> {
    if (since === null) {
      this.sendControl(sub, { type: 'subscribed', recovered: false, ...this.describe(sub.filter) });
      return;
    }
    // Live events queue in sub.pending while the replay is read and sent; then the queue
    // drains, skipping anything the replay already covered, so nothing is lost or doubled.
    let recovered = false;
    let replay: StoredEvent[] = [];
    const anchor = since === 0 ? null : await this.deps.events.get(`evt_${since}`).catch(() => undefined);
    const inWindow = since === 0 || (anchor !== undefined && anchor !== null && this.deps.clock.now() - Date.parse(anchor.event.ts) <= this.limits.replayWindowMs);
    if (inWindow) {
      try {
        replay = await this.readReplay(sub, since);
      } catch (err) {
        // Over the key's rate limit mid-replay: nothing of it is sent; resume after Retry-After.
        const e = err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err)));
        const retryAfter = Number(e.headers['Retry-After']);
        this.sendControl(sub, { type: 'error', code: e.code, message: e.message, ...(retryAfter ? { retry_after: retryAfter } : {}) });
        this.flushNow(sub);
        const close = e.code === 'rate_limited' ? CLOSE.rateLimited : { code: 1011, reason: 'replay_failed' };
        sub.socket.close(close.code, close.reason);
        this.drop(sub);
        return;
      }
      recovered = replay.length <= this.limits.replayMaxEvents;
    }
    this.sendControl(sub, { type: 'subscribed', recovered, ...this.describe(sub.filter) });
    if (recovered) for (const e of replay) this.deliver(sub, e);
    // Appends commit in sequence order, so anything queued at or below the replay's last seq
    // was already part of the replay (deliver skips it, and anything the bus brings later).
    const queued = sub.pending ?? [];
    sub.pending = null;
    for (const e of queued) this.deliver(sub, e);
  }

  /**
   * Every event after `since` that the socket's filter matches, in order, read in pages with the
   * whole filter in the query (the subscription's union included): judging recovery on events
   * filtered after a capped read said `recovered: true` over a gap. Stops one past the cap.
   * Each page counts as a request of the key (throws rate_limited past its limit).
   */
  private async readReplay(sub: Subscriber, since: number): Promise<StoredEvent[]> {
    const f = sub.filter;
    const cap = this.limits.replayMaxEvents;
    const query = {
      sports: f.scopeSports,
      leagues: f.scopeLeagues,
      tier: f.tier,
      ...(!f.everything ? { anyOf: { sports: [...f.sports], leagues: [...f.leagues], games: [...f.games] } } : {}),
    };
    const out: StoredEvent[] = [];
    let cursor = since;
    while (out.length <= cap) {
      const size = Math.min(REPLAY_PAGE, cap + 1 - out.length);
      await meter(this.deps.limiter, sub.principal);
      const page = await this.deps.events.after(cursor, size, query);
      out.push(...page);
      if (page.length < size) break;
      cursor = page[page.length - 1].seq;
    }
    return out;
  }

  private describe(f: StreamFilter) {
    return { sports: [...f.sports], leagues: [...f.leagues], games: [...f.games], tier: f.tier };
  }

  private broadcast(events: StoredEvent[]): void {
    for (const e of events) {
      for (const sub of this.subscribers) {
        if (!matches(sub.filter, e)) continue;
        if (sub.pending) sub.pending.push(e);
        else this.deliver(sub, e);
      }
    }
  }

  /**
   * Events reach a socket in increasing seq: the bus is put in order by the Sequencer, and an
   * event the replay already covered (its broadcast can arrive after the handoff) is skipped. So
   * the last id a client saw is a safe `since`.
   */
  private deliver(sub: Subscriber, e: StoredEvent): void {
    if (e.seq <= sub.lastSeq) return;
    sub.lastSeq = e.seq;
    this.send(sub, eventFrame(e));
  }

  private send(sub: Subscriber, bytes: Buffer): void {
    if (sub.outbox.length === 0) this.dirty.push(sub);
    sub.outbox.push(bytes);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Idle: flush as soon as the code that queued this returns, so a lone event is on the wire
    // before its HTTP request finishes. Busy (the last flush ended less than its own duration
    // ago, so writing costs more than the gaps between events): wait for the next turn, so the
    // frames of every request handled meanwhile leave in one write per socket.
    const sinceLast = performance.now() - this.lastFlushEnd;
    if (sinceLast < Math.max(BUSY_WITHIN_MS, this.lastFlushMs)) setImmediate(() => this.flush());
    else queueMicrotask(() => this.flush());
  }

  /** Writes one subscriber's queued frames now, ahead of a close frame that ws writes directly. */
  private flushNow(sub: Subscriber): void {
    const i = this.dirty.indexOf(sub);
    if (i >= 0) this.dirty.splice(i, 1);
    this.writeOrDrop(sub, this.deps.clock.now());
  }

  private flush(): void {
    this.flushStart ??= performance.now();
    const slice = this.dirty.splice(0, FLUSH_SLICE);
    const now = this.deps.clock.now();
    for (const sub of slice) this.writeOrDrop(sub, now);
    if (this.dirty.length > 0) setImmediate(() => this.flush());
    else {
      this.flushScheduled = false;
      this.lastFlushEnd = performance.now();
      this.lastFlushMs = this.lastFlushEnd - (this.flushStart ?? this.lastFlushEnd);
      this.flushStart = null;
    }
  }

  /**
   * One broken socket must not cost the others their frames, nor the process: a flush runs
   * outside any caller that could catch. Its client reconnects and resumes with `since`.
   */
  private writeOrDrop(sub: Subscriber, now: number): void {
    try {
      this.write(sub, now);
    } catch {
      sub.socket.terminate();
      this.drop(sub);
    }
  }

  private write(sub: Subscriber, now: number): void {
    const frames = sub.outbox;
    sub.outbox = [];
    if (sub.socket.readyState !== sub.socket.OPEN) return;
    if (sub.socket.bufferedAmount > this.limits.maxBufferedBytes) {
      // Resumable: the client reconnects with since=<last id it saw>.
      sub.socket.close(4008, 'slow_consumer');
      this.drop(sub);
      return;
    }
    if (frames.length === 1) sub.raw.write(frames[0]);
    else {
      sub.raw.cork();
      for (const frame of frames) sub.raw.write(frame);
      sub.raw.uncork();
    }
    sub.lastSentAt = now;
  }

  private sendControl(sub: Subscriber, frame: Record<string, unknown>): void {
    this.send(sub, textFrame(Buffer.from(json(frame))));
  }

  private heartbeat(): void {
    const now = this.deps.clock.now();
    for (const sub of this.subscribers) {
      if (sub.pending === null && sub.outbox.length === 0 && now - sub.lastSentAt >= this.limits.heartbeatMs) this.send(sub, this.heartbeatFrame);
    }
  }

  private ping(): void {
    const slot = this.pingTick++ % PING_SLOTS;
    for (const sub of this.subscribers) {
      if (sub.pingSlot !== slot) continue;
      if (!sub.alive) {
        sub.socket.terminate();
        this.drop(sub);
        continue;
      }
      sub.alive = false;
      sub.socket.ping();
    }
  }

  /**
   * A key is resolved once at the upgrade, so a revocation must reach the sockets it opened: every
   * keyCheckMs the keys of all open sockets are re-read in one query, straight from the store (not
   * through the authenticator's cache), on every node. Sockets of a key that is gone or revoked
   * are closed with 4401, and the node's cached principal is dropped with them.
   */
  private async checkKeys(): Promise<void> {
    if (this.checkingKeys || this.subscribers.size === 0) return;
    this.checkingKeys = true;
    try {
      const ids = [...new Set([...this.subscribers].map((s) => s.principal.keyId))];
      const active = await this.deps.activeKeys(ids);
      const revoked = new Set(ids.filter((id) => !active.has(id)));
      if (revoked.size === 0) return;
      for (const id of revoked) this.deps.auth.forgetKey(id);
      for (const sub of this.subscribers) {
        if (!revoked.has(sub.principal.keyId)) continue;
        sub.socket.close(CLOSE.keyRevoked.code, CLOSE.keyRevoked.reason);
        this.drop(sub);
      }
    } catch {
      // The store is unreachable: keep the sockets, the next round checks again.
    } finally {
      this.checkingKeys = false;
    }
  }

  /**
   * A subscribe waits for league lookups, an unsubscribe does not: handled as they came, a
   * subscribe then unsubscribe sent together were answered (and applied) the other way round.
   * Messages run one at a time, in order; past MAX_INBOX waiting, the socket stops being read
   * until they are done, so a flood costs the client, not the node's memory.
   */
  private receive(sub: Subscriber, text: string): void {
    sub.inboxLength++;
    if (sub.inboxLength === MAX_INBOX) sub.socket.pause();
    sub.inbox = sub.inbox
      .then(() => this.onMessage(sub, text))
      .catch(() => undefined)
      .finally(() => {
        sub.inboxLength--;
        if (sub.inboxLength === MAX_INBOX - 1) sub.socket.resume();
      });
  }

  private async onMessage(sub: Subscriber, text: string): Promise<void> {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.sendControl(sub, { type: 'error', code: 'invalid_json', message: 'Messages are JSON objects with an "op".' });
      return;
    }
    if (typeof msg !== 'object' || msg === null || !('op' in msg)) {
      this.sendControl(sub, { type: 'error', code: 'invalid_message', message: 'Messages are JSON objects with an "op".' });
      return;
    }
    const op = msg.op;
    if (op === 'ping') {
      this.sendControl(sub, { type: 'pong' });
      return;
    }
    if (op !== 'subscribe' && op !== 'unsubscribe') {
      this.sendControl(sub, { type: 'error', code: 'unknown_op', message: `Unknown op '${String(op)}'; use subscribe, unsubscribe or ping.` });
      return;
    }
    const lists = {
      sports: 'sports' in msg ? msg.sports : undefined,
      leagues: 'leagues' in msg ? msg.leagues : undefined,
      games: 'games' in msg ? msg.games : undefined,
    };
    const strings = (v: unknown): string[] | null =>
      v === undefined ? [] : Array.isArray(v) && v.every((x): x is string => typeof x === 'string') ? v : null;
    const sports = strings(lists.sports);
    const leagues = strings(lists.leagues);
    const games = strings(lists.games);
    if (!sports || !leagues || !games) {
      this.sendControl(sub, { type: 'error', code: 'invalid_message', message: 'sports, leagues and games are arrays of strings.' });
      return;
    }
    try {
      const listed = { sports, leagues, games };
      let changed: Subscriptions;
      if (op === 'subscribe') {
        const valid = await this.validate(sub.principal, listed);
        if (!this.subscribers.has(sub)) return;
        changed = this.admit(sub.principal.keyId, sub.filter, valid);
      } else changed = this.remove(sub.principal.keyId, sub.filter, listed);
      // Only what this message changed: echoing the whole set made every message cost its size.
      this.sendControl(sub, { type: 'subscribed', recovered: false, op, ...changed, tier: sub.filter.tier });
    } catch (err) {
      const e = err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err)));
      this.sendControl(sub, { type: 'error', code: e.code, message: e.message, ...(e.param ? { param: e.param } : {}) });
    }
  }

  /** Checks requested sports/leagues/games against the known values and the key's scope; returns them without repeats. */
  private async validate(p: Principal, req: Subscriptions): Promise<Subscriptions> {
    const out = { sports: [...new Set(req.sports)], leagues: [...new Set(req.leagues)], games: [...new Set(req.games)] };
    // Bounded before any lookup: a message is at most maxPayload, but thousands of ids are work.
    if (listed(out) > this.limits.maxSubscriptionsPerSocket) throw this.overCap(`A socket holds at most ${this.limits.maxSubscriptionsPerSocket} subscriptions; this asks for ${listed(out)}.`);
    for (const s of out.sports) {
      if (!SPORTS.some((x) => x === s)) throw invalid('invalid_parameter', `Unknown sport '${s}'.`, 'sport');
      requireScope(p, s, undefined, 'sport');
    }
    for (const l of out.leagues) {
      const sport = await this.deps.leagueSport(l);
      if (sport === undefined) throw invalid('invalid_parameter', `Unknown league '${l}'.`, 'league');
      requireScope(p, sport, l, 'league');
    }
    for (const g of out.games) {
      const m = /^([a-z]+)_\d{1,12}$/.exec(g);
      if (!m) throw invalid('invalid_parameter', `'${g}' is not a game id (<sport>_<n>).`, 'game');
      requireScope(p, m[1], undefined, 'game');
    }
    return out;
  }

  private overCap(message: string): SvcError {
    return invalid('subscription_limit', message);
  }

  /**
   * Adds validated subscriptions to a filter, all or nothing, within the socket's and the key's
   * caps; returns what was new. Synchronous, so no other socket of the key slips in between the
   * check and the count.
   */
  private admit(keyId: string, f: StreamFilter, add: Subscriptions): Subscriptions {
    const added = {
      sports: add.sports.filter((x) => !f.sports.has(x)),
      leagues: add.leagues.filter((x) => !f.leagues.has(x)),
      games: add.games.filter((x) => !f.games.has(x)),
    };
    const n = listed(added);
    const socketCap = this.limits.maxSubscriptionsPerSocket;
    const keyCap = this.limits.maxSubscriptionsPerKey;
    if (held(f) + n > socketCap) throw this.overCap(`A socket holds at most ${socketCap} subscriptions; it has ${held(f)} and this adds ${n}.`);
    const ofKey = this.keyLoad.get(keyId) ?? 0;
    if (ofKey + n > keyCap) throw this.overCap(`A key holds at most ${keyCap} subscriptions over its sockets on a node; it has ${ofKey} and this adds ${n}.`);
    for (const s of added.sports) f.sports.add(s);
    for (const l of added.leagues) f.leagues.add(l);
    for (const g of added.games) f.games.add(g);
    if (listed(add) > 0) f.everything = false;
    this.load(keyId, n);
    return added;
  }

  /** Removes subscriptions; returns those that were there. */
  private remove(keyId: string, f: StreamFilter, drop: Subscriptions): Subscriptions {
    const removed = {
      sports: [...new Set(drop.sports)].filter((x) => f.sports.delete(x)),
      leagues: [...new Set(drop.leagues)].filter((x) => f.leagues.delete(x)),
      games: [...new Set(drop.games)].filter((x) => f.games.delete(x)),
    };
    this.load(keyId, -listed(removed));
    return removed;
  }

  /** The subscriptions a key holds over its sockets on this node. */
  private load(keyId: string, delta: number): void {
    const n = (this.keyLoad.get(keyId) ?? 0) + delta;
    if (n > 0) this.keyLoad.set(keyId, n);
    else this.keyLoad.delete(keyId);
  }
}
