import { sql } from 'kysely';
import type { Clock } from '../../domain/clock.js';
import type { Db } from '../sql/db.js';
import { HotSql, type WriteTx } from '../sql/write-tx.js';

const LEASE_LOST = 'lease_lost';

// A report's write checks its game's lease first (store/sql/write-tx.ts: a hot write). PostgreSQL locks
// the row, so a takeover waits for the write and every later write of the old owner fails; there
// the check is in the statement, which refuses by itself and travels with the write.
const FENCE = new HotSql('select owner, token from consensus_leases where game_id = ?');
const FENCE_LOCKED = `case when exists (select 1 from consensus_leases where game_id = ? and owner = ? and token = ? for update) then 1 else svc_refuse('${LEASE_LOST}') end`;

/** Other nodes' leases kept in memory at most (a game each); past it the memory starts over. */
const MAX_OTHERS = 10_000;

/** This node's lease on a game was taken over (or never held): its consensus state there is void. */
export class LeaseLost extends Error {
  constructor(readonly gameId: string) {
    super(`this node no longer owns the consensus of ${gameId}`);
    this.name = 'LeaseLost';
  }
}

export type Claim = { owned: true; token: number; fresh: boolean } | { owned: false; owner: string };

/**
 * One owner per game's consensus: a lease row per game in the shared store, with a fencing
 * token (docs/consensus.md, "Cluster"). A node claims a game whose lease is free, lapsed or its
 * own; each claim bumps the token. Every write of consensus state checks, inside its own
 * transaction, that the row still holds this node's token (on PostgreSQL the row is locked, so a
 * takeover waits for that transaction and every later write of the old owner fails): a node that
 * lost its lease cannot publish a second provisional or confirmation, whatever its clock says.
 * Clocks only decide when a lease counts as lapsed, i.e. how soon a dead node's games move.
 */
export class GameLeases {
  /** gameId → the token this node holds. */
  private readonly held = new Map<string, number>();
  /**
   * Other nodes' leases as last read, kept until the lease would lapse: a report for a game another
   * node owns is routed without asking the store again. Asking costs a claim (an upsert that
   * locks the lease row, so it waits on the owner's own fenced writes) and a read. The owner
   * cannot change before then but by letting go, and a request to a node that let go or died
   * fails, which forgets the entry (`forgetOwner`).
   */
  private readonly others = new Map<string, { owner: string; until: number }>();
  private readonly claiming = new Map<string, Promise<Claim>>();
  private renewedAt = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly nodeId: string,
    readonly ttlMs: number,
  ) {}

  /** The token this node holds for a game, if it believes it owns it. */
  token(gameId: string): number | undefined {
    return this.held.get(gameId);
  }

  heldGames(): string[] {
    return [...this.held.keys()];
  }

  /** Owns the game (already, or now: `fresh`), or names the node that does. */
  claim(gameId: string): Promise<Claim> {
    const token = this.held.get(gameId);
    if (token !== undefined) return Promise.resolve({ owned: true, token, fresh: false });
    const other = this.others.get(gameId);
    if (other && other.until > this.clock.now()) return Promise.resolve({ owned: false, owner: other.owner });
    // Two claims of one game at once from this node would bump the token twice and void the first.
    let p = this.claiming.get(gameId);
    if (!p) {
      p = this.claimNow(gameId).finally(() => this.claiming.delete(gameId));
      this.claiming.set(gameId, p);
    }
    return p;
  }

  private async claimNow(gameId: string): Promise<Claim> {
    const now = this.clock.now();
    const expires = now + this.ttlMs;
    const row = await this.db.kysely
      .insertInto('consensus_leases')
      .values({ game_id: gameId, owner: this.nodeId, token: 1, expires_at: expires })
      .onConflict((oc) =>
        oc
          .column('game_id')
          .doUpdateSet({ owner: this.nodeId, token: sql<number>`consensus_leases.token + 1`, expires_at: expires })
          .where((eb) => eb.or([eb('consensus_leases.owner', '=', this.nodeId), eb('consensus_leases.expires_at', '<=', now)])),
      )
      .returning('token')
      .executeTakeFirst();
    if (row) {
      this.held.set(gameId, Number(row.token));
      this.others.delete(gameId);
      return { owned: true, token: Number(row.token), fresh: true };
    }
    const other = await this.db.kysely.selectFrom('consensus_leases').select(['owner', 'expires_at']).where('game_id', '=', gameId).executeTakeFirst();
    if (!other) return this.claimNow(gameId);
    if (this.others.size >= MAX_OTHERS) this.others.clear();
    this.others.set(gameId, { owner: other.owner, until: Number(other.expires_at) });
    return { owned: false, owner: other.owner };
  }

  /** The owner last read did not answer as the owner (gone, or let the game go): read the lease again on the next claim. */
  forgetOwner(gameId: string): void {
    this.others.delete(gameId);
  }

  /** Inside a write transaction: throws LeaseLost unless this node still holds the game's token. */
  async fence(tx: WriteTx, gameId: string): Promise<void> {
    const token = this.held.get(gameId);
    if (token === undefined) throw new LeaseLost(gameId);
    const refused = () => {
      this.held.delete(gameId);
      return new LeaseLost(gameId);
    };
    tx.fence({
      sqlite: {
        q: FENCE,
        params: [gameId],
        check: ([row]) => {
          if (!row || row.owner !== this.nodeId || Number(row.token) !== token) throw refused();
        },
      },
      postgres: { expr: FENCE_LOCKED, params: [gameId, this.nodeId, token] },
      reason: LEASE_LOST,
      refused,
    });
  }

  /** This node stops believing it owns the game (after a failed write). */
  forget(gameId: string): void {
    this.held.delete(gameId);
  }

  /**
   * Extends the leases this node holds, at most every third of the TTL; returns the games whose
   * lease another node took meanwhile (their state must go).
   */
  async renew(): Promise<string[]> {
    const now = this.clock.now();
    if (this.held.size === 0 || now - this.renewedAt < this.ttlMs / 3) return [];
    this.renewedAt = now;
    const games = [...this.held.keys()];
    const kept = new Map<string, number>();
    for (let i = 0; i < games.length; i += 500) {
      const rows = await this.db.kysely
        .updateTable('consensus_leases')
        .set({ expires_at: now + this.ttlMs })
        .where('owner', '=', this.nodeId)
        .where('game_id', 'in', games.slice(i, i + 500))
        .returning(['game_id', 'token'])
        .execute();
      for (const r of rows) kept.set(r.game_id, Number(r.token));
    }
    const lost: string[] = [];
    for (const g of games) {
      if (kept.get(g) !== this.held.get(g)) {
        this.held.delete(g);
        lost.push(g);
      }
    }
    return lost;
  }

  /**
   * Games with open candidates that no live node owns: no lease, a lapsed one, or one of this
   * node's own name that it does not hold (a restarted single node). Their consensus must resume.
   */
  async orphans(): Promise<string[]> {
    const now = this.clock.now();
    const rows = await this.db.kysely
      .selectFrom('consensus_candidates as c')
      .leftJoin('consensus_leases as l', 'l.game_id', 'c.game_id')
      .select(['c.game_id', 'l.owner', 'l.expires_at'])
      .where('c.state', '=', 'open')
      .distinct()
      .execute();
    return rows
      .filter((r) => !this.held.has(r.game_id) && (r.owner === null || r.owner === this.nodeId || r.expires_at === null || Number(r.expires_at) <= now))
      .map((r) => r.game_id);
  }

  /** Gives games up at once (the node holds no state for them, or is shutting down) so others need not wait for the TTL. */
  async release(gameIds: string[]): Promise<void> {
    for (const g of gameIds) {
      const token = this.held.get(g);
      this.held.delete(g);
      if (token === undefined) continue;
      await this.db.kysely.updateTable('consensus_leases').set({ expires_at: 0 }).where('game_id', '=', g).where('owner', '=', this.nodeId).where('token', '=', token).execute();
    }
  }
}
