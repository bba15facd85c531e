import type { Transaction } from 'kysely';
import type { Replay } from '@svc/schema';
import type { Db } from '../sql/db.js';
import { newestFirst, pageOf, type Page, type PageRequest } from '../sql/page.js';
import type { Database } from '../sql/database.js';
import type { ReplayTable } from './types.js';

/** Statuses of a replay that is not over: what the per-key limit counts and what a driver plays. */
export const ACTIVE_REPLAY_STATUSES = ['scheduled', 'running'] as const;

export const replayRecord = (r: ReplayTable): Replay => ({
  id: r.id,
  game_id: r.game_id,
  source_game_id: r.source_game_id,
  speed: r.speed,
  status: r.status === 'running' ? 'running' : r.status === 'finished' ? 'finished' : r.status === 'cancelled' ? 'cancelled' : 'scheduled',
  reason: r.reason,
  created_at: r.created_at,
  started_at: r.started_at,
  finished_at: r.finished_at,
});

/**
 * The `replays` table (docs/replays.md): each sandbox replay, its status, and which node drives
 * it until when (a claim renewed while the node plays it; a lapsed claim is taken over).
 */
export class ReplayRepo {
  constructor(private readonly db: Db) {}

  /** The key's replays not over yet; read inside the creating transaction, which holds the schedule lock. */
  static async activeCount(trx: Transaction<Database>, keyId: string): Promise<number> {
    const row = await trx
      .selectFrom('replays')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('key_id', '=', keyId)
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  static async insert(trx: Transaction<Database>, row: ReplayTable): Promise<void> {
    await trx.insertInto('replays').values(row).execute();
  }

  async get(keyId: string, id: string): Promise<ReplayTable | undefined> {
    return this.db.kysely.selectFrom('replays').selectAll().where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
  }

  async byId(id: string): Promise<ReplayTable | undefined> {
    return this.db.kysely.selectFrom('replays').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The key's replays, newest first. */
  async list(keyId: string, page: PageRequest): Promise<Page<Replay>> {
    const rows = await newestFirst(
      this.db.kysely
        .selectFrom('replays')
        .selectAll()
        .where('key_id', '=', keyId),
      page,
    ).execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], replayRecord);
  }

  /** Replays not over whose driver's claim has lapsed (or that have none yet), oldest first. */
  async unclaimed(nowIso: string, limit: number): Promise<ReplayTable[]> {
    return this.db.kysely
      .selectFrom('replays')
      .selectAll()
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .where((eb) => eb.or([eb('driver_until', 'is', null), eb('driver_until', '<', nowIso)]))
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  /**
   * Takes the replay for `node` until `untilIso` when no other node's claim holds it; true when
   * this node drives it now. One conditional update: two nodes cannot both win.
   */
  async claim(id: string, node: string, nowIso: string, untilIso: string): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('replays')
      .set({ driver: node, driver_until: untilIso })
      .where('id', '=', id)
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .where((eb) => eb.or([eb('driver', 'is', null), eb('driver', '=', node), eb('driver_until', 'is', null), eb('driver_until', '<', nowIso)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Extends this node's claims; returns the ids it still holds (a replay cancelled meanwhile is not among them). */
  async renew(ids: readonly string[], node: string, untilIso: string): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    await this.db.kysely
      .updateTable('replays')
      .set({ driver_until: untilIso })
      .where('id', 'in', [...ids])
      .where('driver', '=', node)
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .execute();
    const held = await this.db.kysely
      .selectFrom('replays')
      .select('id')
      .where('id', 'in', [...ids])
      .where('driver', '=', node)
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .execute();
    return new Set(held.map((r) => r.id));
  }

  /** Gives this node's claims up (shutting down), so another node takes the replays at once. */
  async release(ids: readonly string[], node: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.kysely.updateTable('replays').set({ driver: null, driver_until: null }).where('id', 'in', [...ids]).where('driver', '=', node).execute();
  }

  async markRunning(id: string, nowIso: string): Promise<void> {
    await this.db.kysely.updateTable('replays').set({ status: 'running', started_at: nowIso }).where('id', '=', id).where('status', '=', 'scheduled').execute();
  }

  /** Ends a replay not over yet; false when it already was (finished or cancelled before). */
  async end(id: string, status: 'finished' | 'cancelled', reason: string | null, nowIso: string): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('replays')
      .set({ status, reason, finished_at: nowIso, driver: null, driver_until: null })
      .where('id', '=', id)
      .where('status', 'in', [...ACTIVE_REPLAY_STATUSES])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
