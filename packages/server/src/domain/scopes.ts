import type { Product } from '@svc/schema';
import { SvcError } from './errors.js';
import type { Plan } from './plans.js';

/** Who is calling: an API key's grants, resolved once per request at the auth boundary. */
export interface Principal {
  keyId: string;
  name: string;
  environment: string;
  plan: Plan;
  products: readonly Product[];
  sports: readonly string[] | null;
  leagues: readonly string[] | null;
}

/** A resolved sport/league allow-list to push into queries; null means unrestricted. */
export interface ScopeFilter {
  sports: readonly string[] | null;
  leagues: readonly string[] | null;
  /**
   * The key whose sandbox replays' games are visible besides every real game; null: real games
   * only (docs/replays.md).
   */
  viewerKeyId: string | null;
}

/** Whether a game (or its event) owned by `ownerKeyId` exists for the key `viewerKeyId` (docs/replays.md). */
export function visibleTo(ownerKeyId: string | null | undefined, viewerKeyId: string | null): boolean {
  return !ownerKeyId || ownerKeyId === viewerKeyId;
}

export function requireProduct(p: Principal, product: Product): void {
  if (!p.products.includes(product)) {
    throw new SvcError('product_not_in_plan', `This key does not include the '${product}' product.`);
  }
}

export function inScope(p: Principal, sport: string, league?: string): boolean {
  if (p.sports && !p.sports.includes(sport)) return false;
  if (p.leagues && league !== undefined && !p.leagues.includes(league)) return false;
  return true;
}

/** Throws 403 sport_not_in_scope unless the key may see this sport (and league). */
export function requireScope(p: Principal, sport: string, league?: string, param?: string): void {
  if (!inScope(p, sport, league)) {
    const what = p.sports && !p.sports.includes(sport) ? `sport '${sport}'` : `league '${league}'`;
    throw new SvcError('sport_not_in_scope', `This key is not scoped to ${what}.`, param);
  }
}

/**
 * Narrows an explicit filter to the key's scope: an explicit value outside the scope is a 403,
 * no value means "everything the key may see".
 */
export function scopeFor(p: Principal, sport?: string, league?: string, leagueSport?: string): ScopeFilter {
  if (sport !== undefined) requireScope(p, sport, undefined, 'sport');
  if (league !== undefined) {
    if (p.leagues && !p.leagues.includes(league)) requireScope(p, leagueSport ?? sport ?? '', league, 'league');
    if (leagueSport !== undefined) requireScope(p, leagueSport, league, 'league');
  }
  return {
    sports: sport !== undefined ? [sport] : p.sports,
    leagues: league !== undefined ? [league] : p.leagues,
    viewerKeyId: p.keyId,
  };
}
