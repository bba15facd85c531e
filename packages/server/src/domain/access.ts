import type { Product } from '@svc/schema';
import { TEAM_SPORTS } from '@svc/schema';
import { SvcError, invalid } from './errors.js';
import { requireScope, type Principal } from './scopes.js';

export interface EligibilityInput {
  sport: string;
  date: string;
  status: string;
}

/**
 * Which products serve a competition's events and plays today:
 * `live` covers today's and live competitions, `archive` those settled (final, or cancelled:
 * docs/schedule.md) before today.
 * Future competitions are part of the live schedule; reports are taken for today's games that
 * are not final.
 */
export function eligibility(c: EligibilityInput, today: string): { live: boolean; archive: boolean; reports: boolean } {
  const archive = (c.status === 'final' || c.status === 'cancelled') && c.date < today;
  const live = !archive;
  const reports = TEAM_SPORTS.some((s) => s === c.sport) && c.status !== 'final' && c.status !== 'cancelled' && c.status !== 'postponed' && (c.date === today || c.status === 'live' || c.status === 'suspended');
  return { live, archive, reports };
}

/** The product that reads a competition's plays and events today: `archive` once it is settled before today, else `live`. */
export function eventProduct(c: EligibilityInput, today: string): Product {
  return eligibility(c, today).archive ? 'archive' : 'live';
}

/**
 * Whether a key's products let it read a competition's events (its scope aside): the one rule
 * behind `GET /v1/games/:id/events`, the change feed's `event.created` (docs/changes.md) and the
 * stream's resume (docs/stream.md).
 */
export function mayReadEvents(p: Pick<Principal, 'products'>, c: EligibilityInput, today: string): boolean {
  return p.products.includes(eventProduct(c, today));
}

/** The product needed to read a competition's plays and events, checked with its scope. */
export function requireEventAccess(p: Principal, c: EligibilityInput & { league: string }, today: string): void {
  requireScope(p, c.sport, c.league);
  const needed = eventProduct(c, today);
  if (!p.products.includes(needed)) {
    throw new SvcError(
      'product_not_in_plan',
      needed === 'archive'
        ? 'Events and plays of past competitions need the archive product.'
        : 'Events and plays of today’s and live competitions need the live product.',
    );
  }
}

/** `today` or a real calendar date, else a 400 naming the parameter. */
export function resolveDate(value: string, today: string, param = 'date'): string {
  if (value === 'today') return today;
  const d = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw invalid('invalid_parameter', `'${param}' must be today or a real date as YYYY-MM-DD.`, param);
  }
  return value;
}
