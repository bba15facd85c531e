import { BUS_FAULT_MESSAGE, busFault } from '../bus/faults.js';
import { ChannelSubscription, redisKnownAway } from '../bus/link.js';
import { STORE_FAULT_MESSAGES, storeFault } from '../store/sql/faults.js';
import type { RedisKeys } from '../bus/redis-keys.js';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ERROR_CODES, ReportInput, ReportResult, type ErrorCode } from '@svc/schema';
import { SvcError } from '../domain/errors.js';

/** An official scoring play, as the owner's engine takes it. */
const OfficialPlay = Type.Object({
  team: Type.String(),
  points: Type.Number(),
  eventType: Type.String(),
  clock: Type.Optional(Type.String()),
  observedAt: Type.Number(),
  /** The play's `seq`, so the event it settles is linked to it (docs/corrections.md). */
  seq: Type.Optional(Type.Integer()),
});
export type OfficialPlay = Static<typeof OfficialPlay>;

/**
 * Work on one game's consensus, sent to the node that owns the game. Reports arrive validated
 * and authorised by the node that took them; the owner needs only the key id (`reporterId`),
 * each report naming its reporter under the key.
 */
const OwnerRequest = Type.Union([
  Type.Object({ kind: Type.Literal('reports'), gameId: Type.String(), reporterId: Type.String(), reports: Type.Array(ReportInput) }),
  Type.Object({ kind: Type.Literal('official'), gameId: Type.String(), play: OfficialPlay }),
  // `final`: ended by its final play, whose record judges the game's crowd votes (docs/consensus.md).
  Type.Object({ kind: Type.Literal('forget'), gameId: Type.String(), final: Type.Optional(Type.Boolean()) }),
  /** A voter was suspended: its votes leave the game's open candidates (docs/reporters.md). */
  Type.Object({ kind: Type.Literal('withdraw'), gameId: Type.String(), voter: Type.String() }),
]);
export type OwnerRequest = Static<typeof OwnerRequest>;

/** `notOwner`: the node no longer owns the game; the sender asks the store again. */
const OwnerReply = Type.Union([
  Type.Object({ ok: Type.Literal(true), results: Type.Array(ReportResult) }),
  Type.Object({ ok: Type.Literal(false), notOwner: Type.Literal(true) }),
  Type.Object({ ok: Type.Literal(false), notOwner: Type.Literal(false), error: Type.Object({ code: Type.String(), message: Type.String(), param: Type.Optional(Type.String()) }) }),
]);
export type OwnerReply = Static<typeof OwnerReply>;

/** No answer in time: the owner may be dead (its lease lapses within the TTL) or gone. */
export class RouteFailed extends Error {
  constructor(
    owner: string,
    /** Redis, which carries requests between nodes, was away: the call needs the bus, not a new owner. */
    readonly busAway = false,
  ) {
    super(`node ${owner} did not answer`);
    this.name = 'RouteFailed';
  }
}

export interface OwnerRouter {
  send(owner: string, req: OwnerRequest, timeoutMs: number): Promise<OwnerReply>;
  /** This node's handler of requests for the games it owns. */
  serve(handler: (req: OwnerRequest) => Promise<OwnerReply>): void;
  close(): Promise<void>;
}

const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CODES, code);

/** The error a forwarded request ended in, as the reporter would have got it from the owner. */
export function replyError(reply: Extract<OwnerReply, { notOwner: false }>): Error {
  const { code, message, param } = reply.error;
  return isErrorCode(code) ? new SvcError(code, message, param) : new Error(message);
}

/**
 * The owner's failure as the sender answers it: a database or Redis fault as its 503, as if the
 * sender had met it itself; anything else an internal error whose driver or stack text stays on
 * the owner (docs/decisions.md, "Errors").
 */
export function errorReply(err: unknown): OwnerReply {
  if (err instanceof SvcError) return { ok: false, notOwner: false, error: { code: err.code, message: err.message, param: err.param } };
  const fault = storeFault(err);
  if (fault) return { ok: false, notOwner: false, error: { code: fault, message: STORE_FAULT_MESSAGES[fault] } };
  if (busFault(err)) return { ok: false, notOwner: false, error: { code: 'bus_unavailable', message: BUS_FAULT_MESSAGE } };
  return { ok: false, notOwner: false, error: { code: 'internal_error', message: 'Something went wrong on the node that holds the game; the request id helps us find it.' } };
}

const Wire = Type.Union([
  Type.Object({ t: Type.Literal('req'), id: Type.String(), from: Type.String(), req: OwnerRequest }),
  Type.Object({ t: Type.Literal('res'), id: Type.String(), from: Type.String(), reply: OwnerReply }),
]);
type Wire = Static<typeof Wire>;

/** A message from another node; anything else on the channel is ignored. */
function parseWire(message: string): Wire | null {
  try {
    const m: unknown = JSON.parse(message);
    return Value.Check(Wire, m) ? m : null;
  } catch {
    return null;
  }
}

/**
 * Request and reply over Redis pub/sub, one channel per node: cluster mode already runs on
 * Redis (the event bus), it needs no address per node, and a message is one round trip to a
 * local Redis. Redis is trusted like the database: a request carries the sender's already
 * authenticated principal.
 */
export class RedisRouter implements OwnerRouter {
  private readonly pending = new Map<string, { resolve: (r: OwnerReply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private handler: ((req: OwnerRequest) => Promise<OwnerReply>) | null = null;
  /** This node's own channel: without it no reply could reach us. */
  private readonly own: ChannelSubscription;
  /** A request needs both connections: one carries it out, the other brings the reply back. */
  private readonly away: () => boolean;

  constructor(
    private readonly nodeId: string,
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.away = redisKnownAway(pub, sub);
    this.sub.on('message', (ch: string, message: string) => {
      if (ch !== this.channel(this.nodeId)) return;
      const w = parseWire(message);
      if (!w) return;
      if (w.t === 'res') {
        const p = this.pending.get(w.id);
        if (!p) return;
        this.pending.delete(w.id);
        clearTimeout(p.timer);
        p.resolve(w.reply);
      } else {
        void this.answer(w.from, w.id, w.req);
      }
    });
    // ioredis reconnects by itself; while it cannot, requests fail as RouteFailed and callers
    // fall back on the lease. The listener keeps a refused connection from being an unhandled event.
    this.sub.on('error', () => undefined);
    this.own = new ChannelSubscription(this.sub, this.channel(this.nodeId));
  }

  private channel(node: string): string {
    return this.keys.consensus(node);
  }

  private async answer(from: string, id: string, req: OwnerRequest): Promise<void> {
    let reply: OwnerReply;
    try {
      reply = this.handler ? await this.handler(req) : { ok: false, notOwner: true };
    } catch (err) {
      reply = errorReply(err);
    }
    const w: Wire = { t: 'res', id, from: this.nodeId, reply };
    await this.pub.publish(this.channel(from), JSON.stringify(w)).catch(() => undefined);
  }

  async send(owner: string, req: OwnerRequest, timeoutMs: number): Promise<OwnerReply> {
    // Redis known away: fail now rather than after ioredis' queue gives up (bus/link.ts).
    if (this.away()) throw new RouteFailed(owner, true);
    // Without our own channel no reply could reach us.
    if ((await this.own.ensure()) !== null) throw new RouteFailed(owner, true);
    const id = randomBytes(8).toString('hex');
    const w: Wire = { t: 'req', id, from: this.nodeId, req };
    // One promise settles the request: the reply, the timeout, no receiver, or a publish that
    // failed (Redis away). The caller awaits only it, so nothing rejects where nobody listens.
    const answered = new Promise<OwnerReply>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(id, owner), timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    this.pub.publish(this.channel(owner), JSON.stringify(w)).then(
      // Nobody listens on that channel: the owner is gone, no need to wait for the timeout.
      (receivers) => (receivers === 0 ? this.fail(id, owner) : undefined),
      () => this.fail(id, owner, true),
    );
    return answered;
  }

  /** Ends a pending request with RouteFailed, once: later calls for the same id do nothing. */
  private fail(id: string, owner: string, busAway = false): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.reject(new RouteFailed(owner, busAway || this.away()));
  }

  serve(handler: (req: OwnerRequest) => Promise<OwnerReply>): void {
    this.handler = handler;
  }

  async whenReady(): Promise<void> {
    const failed = await this.own.ensure();
    if (failed) throw failed;
  }

  async close(): Promise<void> {
    this.handler = null;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new RouteFailed('(closing)'));
    }
    this.pending.clear();
    await this.sub.unsubscribe(this.channel(this.nodeId)).catch(() => undefined);
    this.sub.disconnect();
  }
}

/** Nodes in one process (tests): a request is a direct call to the owner's handler. */
export class InProcessNetwork {
  private readonly nodes = new Map<string, (req: OwnerRequest) => Promise<OwnerReply>>();

  router(nodeId: string): OwnerRouter {
    return {
      send: async (owner, req) => {
        const h = this.nodes.get(owner);
        if (!h) throw new RouteFailed(owner);
        // Through the wire format, as between processes.
        const sent = parseWire(JSON.stringify({ t: 'req', id: '0', from: nodeId, req }));
        if (sent?.t !== 'req') throw new Error('request does not match the wire format');
        const back = parseWire(JSON.stringify({ t: 'res', id: '0', from: owner, reply: await h(sent.req) }));
        if (back?.t !== 'res') throw new Error('reply does not match the wire format');
        return back.reply;
      },
      serve: (handler) => {
        this.nodes.set(nodeId, handler);
      },
      close: async () => {
        this.nodes.delete(nodeId);
      },
    };
  }
}
