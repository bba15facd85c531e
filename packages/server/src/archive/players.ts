import type { PlayerTable, RosterTable } from '../store/reference/types.js';
import { searchName } from '../store/reference/reference.js';
import { normWords, slugify } from './slug.js';

export interface PlayerExtra {
  position?: string | null;
  externalIds?: string;
}

/**
 * The players of one league, keyed by slug: the first record seen for a slug wins, so two
 * people with the same name in one league share an id (accepted; see the README of the archive).
 */
export class PlayerBook {
  readonly rows: PlayerTable[] = [];
  private readonly bySlug = new Map<string, PlayerTable>();
  private readonly rosterRows = new Map<string, RosterTable>();

  constructor(
    readonly league: string,
    readonly sport: string,
    private readonly synthetic = 0,
  ) {}

  has(slug: string): boolean {
    return this.bySlug.has(slug);
  }

  /** The player id for a name, creating the player on first sight. */
  ensure(name: string, extra: PlayerExtra = {}, slug = slugify(name)): string {
    const found = this.bySlug.get(slug);
    if (found) return found.id;
    const row: PlayerTable = {
      id: `player:${this.league}:${slug || 'unknown'}`,
      sport: this.sport,
      league: this.league,
      name,
      search_name: searchName(name),
      position: extra.position ?? null,
      external_ids: extra.externalIds ?? '{}',
      synthetic: this.synthetic,
    };
    this.bySlug.set(slug, row);
    this.rows.push(row);
    return row.id;
  }

  /** One roster row per (team, season, player); the first jersey/position seen is kept. */
  roster(teamId: string, playerId: string, seasonId: string, jersey: number | null = null, position: string | null = null): void {
    const key = `${teamId}|${seasonId}|${playerId}`;
    if (this.rosterRows.has(key)) return;
    this.rosterRows.set(key, { team_id: teamId, player_id: playerId, season_id: seasonId, jersey, position, from_date: null, to_date: null });
  }

  rosters(): RosterTable[] {
    return [...this.rosterRows.values()];
  }
}

/** Finds a squad member by a scorer's name: the full name, else a surname unique in that squad. */
export class SquadIndex {
  private readonly full = new Map<string, string>();
  private readonly surname = new Map<string, string[]>();

  add(teamId: string, name: string, playerId: string): void {
    const words = normWords(name);
    this.full.set(`${teamId}|${words}`, playerId);
    const last = words.split(' ').pop() ?? '';
    const key = `${teamId}|${last}`;
    this.surname.set(key, [...(this.surname.get(key) ?? []), playerId]);
  }

  find(teamId: string, name: string): string | null {
    const words = normWords(name);
    const exact = this.full.get(`${teamId}|${words}`);
    if (exact) return exact;
    const same = this.surname.get(`${teamId}|${words.split(' ').pop() ?? ''}`);
    return same && same.length === 1 ? same[0] : null;
  }
}
