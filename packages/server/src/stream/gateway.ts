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
import type { Authenticator } from '../http/auth.js';
import { eventSeq } from '../store/competitions.js';
import type { EventLog, StoredEvent } from '../store/events.js';
import type { ConnectionCounter } from './connection-counter.js';
import { matches, type StreamFilter } from './filter.js';
import { eventFrame, textFrame } from './frames.js';

export const STREAM_LIMITS = {
  heartbeatMs: 5_000,
  pingMs: 15_000,
  maxBufferedBytes: 1024 * 1024,
  replayMaxEvents: 10_000,
  replayWindowMs: 24 * 3600 * 1000,
};

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
  lastSentAt: number;
  alive: boolean;
  /** Which tick of the ping round pings this subscriber (see PING_SLOTS). */
  pingSlot: number;
  release: () => void;
}

export interface GatewayDeps {
  auth: Authenticator;
  bus: EventBus;
  events: EventLog;
  counter: ConnectionCounter;
  clock: Clock;
  leagueSport: (league: string) => Promise<string | undefined>;
  limits?: Partial<typeof STREAM_LIMITS>;
}

const json = (v: unknown) => JSON.stringify(v);
const csv = (v: string | null): string[] => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

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
  /** Set by close(): upgrades still arriving are refused, or closed as soon as they open. */
  private closing = false;

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
      if (this.closing) {
        this.refuse(socket, new SvcError('unavailable', 'draining', 'This node is shutting down; connect again to reach another node.'));
        return;
      }
      void this.handleUpgrade(req, socket, head, url);
    });
    this.unsubscribe = this.deps.bus.subscribe((events) => this.broadcast(events));
    const beat = setInterval(() => this.heartbeat(), 1000);
    const ping = setInterval(() => this.ping(), this.limits.pingMs / PING_SLOTS);
    beat.unref();
    ping.unref();
    this.timers.push(beat, ping);
  }

  get connections(): number {
    return this.subscribers.size;
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
    const now = this.deps.clock.now();
    for (const sub of this.dirty.splice(0)) this.writeOrDrop(sub, now);
    const subs = [...this.subscribers];
    const gone = subs.map((s) => new Promise<void>((resolve) => (s.socket.readyState === s.socket.CLOSED ? resolve() : s.socket.once('close', () => resolve()))));
    for (const s of subs) s.socket.close(1001, 'server shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const s of subs) {
      s.socket.terminate();
      this.drop(s);
    }
    this.wss.close();
  }

  private refuse(socket: Duplex, e: SvcError): void {
    const body = json(errorBody(e, `req_${randomBase62(20)}`));
    socket.end(
      `HTTP/1.1 ${e.status} ${e.type}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
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
      requireProduct(principal, 'live');
      for (const name of url.searchParams.keys()) {
        if (!QUERY_PARAMS.has(name)) throw invalid('unknown_parameter', `Unknown parameter '${name}'.`, name);
      }
      filter = {
        sports: new Set(),
        leagues: new Set(),
        games: new Set(),
        tier: null,
        scopeSports: principal.sports,
        scopeLeagues: principal.leagues,
      };
      await this.addToFilter(principal, filter, {
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
    } catch (err) {
      this.refuse(socket, err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err))));
      return;
    }

    const token = await this.deps.counter.acquire(principal.keyId, principal.plan.streamConnections).catch(() => null);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (!token) {
        ws.close(4029, 'connection limit of the plan reached');
        return;
      }
      if (this.closing) {
        void this.deps.counter.release(principal.keyId, token);
        ws.close(1001, 'server shutting down');
        return;
      }
      const sub: Subscriber = {
        socket: ws,
        raw: socket,
        outbox: [],
        principal,
        filter,
        pending: since === null ? null : [],
        lastSentAt: this.deps.clock.now(),
        alive: true,
        pingSlot: this.nextPingSlot++ % PING_SLOTS,
        release: () => void this.deps.counter.release(principal.keyId, token),
      };
      this.subscribers.add(sub);
      ws.on('pong', () => {
        sub.alive = true;
      });
      ws.on('message', (data, isBinary) => void this.onMessage(sub, isBinary ? '' : data.toString()));
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
      const f = sub.filter;
      replay = await this.deps.events.after(since, this.limits.replayMaxEvents + 1, {
        sports: f.scopeSports,
        leagues: f.scopeLeagues,
        tier: f.tier,
      });
      replay = replay.filter((e) => matches(f, e));
      recovered = replay.length <= this.limits.replayMaxEvents;
    }
    this.sendControl(sub, { type: 'subscribed', recovered, ...this.describe(sub.filter) });
    if (recovered) for (const e of replay) this.deliver(sub, e);
    // Appends commit in sequence order, so anything queued at or below the replay's last seq
    // was already part of the replay.
    const covered = recovered && replay.length > 0 ? replay[replay.length - 1].seq : since;
    const queued = sub.pending ?? [];
    sub.pending = null;
    for (const e of queued) if (e.seq > covered) this.deliver(sub, e);
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

  private deliver(sub: Subscriber, e: StoredEvent): void {
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
      if (op === 'subscribe') await this.addToFilter(sub.principal, sub.filter, { sports, leagues, games });
      else {
        for (const s of sports) sub.filter.sports.delete(s);
        for (const l of leagues) sub.filter.leagues.delete(l);
        for (const g of games) sub.filter.games.delete(g);
      }
      this.sendControl(sub, { type: 'subscribed', recovered: false, ...this.describe(sub.filter) });
    } catch (err) {
      const e = err instanceof SvcError ? err : toSvcError(err instanceof Error ? err : new Error(String(err)));
      this.sendControl(sub, { type: 'error', code: e.code, message: e.message, ...(e.param ? { param: e.param } : {}) });
    }
  }

  /** Validates requested sports/leagues/games against the known values and the key's scope. */
  private async addToFilter(p: Principal, f: StreamFilter, add: { sports: string[]; leagues: string[]; games: string[] }): Promise<void> {
    for (const s of add.sports) {
      if (!SPORTS.some((x) => x === s)) throw invalid('invalid_parameter', `Unknown sport '${s}'.`, 'sport');
      requireScope(p, s, undefined, 'sport');
    }
    for (const l of add.leagues) {
      const sport = await this.deps.leagueSport(l);
      if (sport === undefined) throw invalid('invalid_parameter', `Unknown league '${l}'.`, 'league');
      requireScope(p, sport, l, 'league');
    }
    for (const g of add.games) {
      const m = /^([a-z]+)_\d{1,12}$/.exec(g);
      if (!m) throw invalid('invalid_parameter', `'${g}' is not a game id (<sport>_<n>).`, 'game');
      requireScope(p, m[1], undefined, 'game');
    }
    for (const s of add.sports) f.sports.add(s);
    for (const l of add.leagues) f.leagues.add(l);
    for (const g of add.games) f.games.add(g);
  }
}
