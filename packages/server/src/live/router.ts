import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ERROR_CODES, type ErrorCode, type ReportInput, type ReportResult } from '@svc/schema';
import { SvcError } from '../domain/errors.js';
import type { Principal } from '../domain/scopes.js';

/** An official scoring play, as the owner's engine takes it. */
export interface OfficialPlay {
  team: string;
  points: number;
  eventType: string;
  clock?: string;
  observedAt: number;
}

/** Work on one game's consensus, sent to the node that owns the game. */
export type OwnerRequest =
  | { kind: 'reports'; gameId: string; principal: Principal; reports: ReportInput[] }
  | { kind: 'official'; gameId: string; play: OfficialPlay }
  | { kind: 'forget'; gameId: string };

/** `not_owner`: the node no longer owns the game; the sender asks the store again. */
export type OwnerReply =
  | { ok: true; results: ReportResult[] }
  | { ok: false; notOwner: true }
  | { ok: false; notOwner: false; error: { code: string; message: string; param?: string } };

/** No answer in time: the owner may be dead (its lease lapses within the TTL) or gone. */
export class RouteFailed extends Error {
  constructor(owner: string) {
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

export function errorReply(err: unknown): OwnerReply {
  if (err instanceof SvcError) return { ok: false, notOwner: false, error: { code: err.code, message: err.message, param: err.param } };
  return { ok: false, notOwner: false, error: { code: 'internal_error', message: err instanceof Error ? err.message : String(err) } };
}

interface Wire {
  t: 'req' | 'res';
  id: string;
  from: string;
  req?: OwnerRequest;
  reply?: OwnerReply;
}

function parseWire(message: string): Wire | null {
  const m: unknown = JSON.parse(message);
  if (typeof m !== 'object' || m === null || !('t' in m) || !('id' in m) || !('from' in m)) return null;
  const { t, id, from } = m;
  if ((t !== 'req' && t !== 'res') || typeof id !== 'string' || typeof from !== 'string') return null;
  const req = 'req' in m && typeof m.req === 'object' && m.req !== null && 'kind' in m.req && 'gameId' in m.req ? (m.req as OwnerRequest) : undefined;
  const reply = 'reply' in m && typeof m.reply === 'object' && m.reply !== null && 'ok' in m.reply ? (m.reply as OwnerReply) : undefined;
  return { t, id, from, req, reply };
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
  private readonly ready: Promise<unknown>;

  constructor(
    private readonly nodeId: string,
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly prefix = 'svc:',
  ) {
    this.sub.on('message', (ch: string, message: string) => {
      if (ch !== this.channel(this.nodeId)) return;
      const w = parseWire(message);
      if (!w) return;
      if (w.t === 'res' && w.reply) {
        const p = this.pending.get(w.id);
        if (!p) return;
        this.pending.delete(w.id);
        clearTimeout(p.timer);
        p.resolve(w.reply);
      } else if (w.t === 'req' && w.req) {
        void this.answer(w.from, w.id, w.req);
      }
    });
    this.ready = this.sub.subscribe(this.channel(this.nodeId));
  }

  private channel(node: string): string {
    return `${this.prefix}consensus:${node}`;
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
    await this.ready;
    const id = randomBytes(8).toString('hex');
    const w: Wire = { t: 'req', id, from: this.nodeId, req };
    const answered = new Promise<OwnerReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RouteFailed(owner));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    const receivers = await this.pub.publish(this.channel(owner), JSON.stringify(w));
    if (receivers === 0) {
      // Nobody listens on that channel: the owner is gone, no need to wait for the timeout.
      const p = this.pending.get(id);
      if (p) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(new RouteFailed(owner));
      }
    }
    return answered;
  }

  serve(handler: (req: OwnerRequest) => Promise<OwnerReply>): void {
    this.handler = handler;
  }

  async whenReady(): Promise<void> {
    await this.ready;
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
        // Through JSON, as over the wire.
        const reply = await h(JSON.parse(JSON.stringify(req)));
        return JSON.parse(JSON.stringify(reply));
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
