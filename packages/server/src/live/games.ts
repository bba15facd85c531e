import { parseGameId } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';

/** What ingestion needs to know about a game, cached so a report costs no extra query. */
export interface GameInfo {
  gameId: string;
  competitionId: string;
  sport: string;
  league: string;
  seasonId: string;
  date: string;
  status: string;
  /** The key owning the game (a sandbox replay's), null for a real game: docs/replays.md. */
  ownerKeyId: string | null;
  /** team code → competitor */
  teams: Map<string, { entityId: string; role: string; idx: number }>;
}

/** How many games, and how many ids that name none, a node keeps in memory. */
const CACHE_CAP = 50_000;

export class GameDirectory {
  /**
   * How long an id that names no game is remembered: long enough that made-up ids cost no read
   * each, short enough that a game created on another node (a sandbox replay's, numbered next)
   * becomes reportable here within seconds.
   */
  static readonly UNKNOWN_FOR_MS = 5_000;
  private cache = new Map<string, GameInfo>();
  /** id → until when it counts as naming no game. */
  private unknown = new Map<string, number>();
  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly clock: Clock,
  ) {}

  async byGameId(gameId: string): Promise<GameInfo | undefined> {
    const hit = this.cache.get(gameId);
    if (hit) return hit;
    const now = this.clock.now();
    const until = this.unknown.get(gameId);
    if (until !== undefined && now < until) return undefined;
    const game = parseGameId(gameId);
    const info = game ? await this.load(game) : undefined;
    if (info) {
      this.unknown.delete(gameId);
      return info;
    }
    if (this.unknown.size >= CACHE_CAP) this.unknown.clear();
    this.unknown.set(gameId, now + GameDirectory.UNKNOWN_FOR_MS);
    return undefined;
  }

  async byCompetitionId(id: string): Promise<GameInfo | undefined> {
    return this.load({ id });
  }

  /** Scheduled competitions among `ids` become live in the store (callers then setStatus). */
  markLive(ids: readonly string[]): Promise<void> {
    return this.competitions.markLive(ids, isoTime(this.clock.now()));
  }

  /** Drops what is known of a game (its status or start moved, maybe on another node): the next use reads it again. */
  forget(gameId: string): void {
    this.cache.delete(gameId);
    this.unknown.delete(gameId);
  }

  /** Ingestion changes status; keep the cache in step without a re-read. */
  setStatus(gameId: string, status: string): void {
    const info = this.cache.get(gameId);
    if (info) info.status = status;
  }

  private async load(by: { id: string } | { sport: string; n: number }): Promise<GameInfo | undefined> {
    const found = await this.competitions.header(by);
    if (!found) return undefined;
    const { competition: row, competitors } = found;
    const teams = new Map<string, { entityId: string; role: string; idx: number }>();
    for (const c of competitors) {
      const code = c.entity_type === 'team' ? c.entity_id.split(':').pop() : undefined;
      if (code) teams.set(code, { entityId: c.entity_id, role: c.role, idx: c.idx });
    }
    const info: GameInfo = {
      gameId: `${row.sport}_${row.n}`,
      competitionId: row.id,
      sport: row.sport,
      league: row.league,
      seasonId: row.season_id,
      date: row.date,
      status: row.status,
      ownerKeyId: row.owner_key_id ?? null,
      teams,
    };
    if (this.cache.size >= CACHE_CAP) this.cache.clear();
    this.cache.set(info.gameId, info);
    return info;
  }
}
