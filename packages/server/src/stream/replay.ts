import type { Principal } from '../domain/scopes.js';
import { meter } from '../http/auth.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { EventLog, StoredEvent } from '../store/events/events.js';
import { nextTurn } from '../export/next-turn.js';
import type { StreamFilter } from './filter.js';

/** Rows per replay read: a resume of the whole cap is a handful of bounded queries, not one huge one. */
const REPLAY_PAGE = 1000;

/**
 * Every event after `since` that the socket's filter matches, in order, read in pages with the
 * whole filter in the query (the subscription's union included): judging recovery on events
 * filtered after a capped read said `recovered: true` over a gap. Stops one past `cap`. Each page
 * counts as a request of the key (throws rate_limited past its limit).
 */
export async function readReplay(
  deps: { events: EventLog; limiter: RateLimiter },
  principal: Principal,
  f: StreamFilter,
  since: number,
  cap: number,
): Promise<StoredEvent[]> {
  const query = {
    sports: f.scopeSports,
    leagues: f.scopeLeagues,
    games: f.scopeGames,
    tier: f.tier,
    types: f.types,
    viewerKeyId: f.viewerKeyId,
    ...(!f.everything ? { anyOf: { sports: [...f.sports], leagues: [...f.leagues], games: [...f.games] } } : {}),
  };
  const out: StoredEvent[] = [];
  let cursor = since;
  while (out.length <= cap) {
    const size = Math.min(REPLAY_PAGE, cap + 1 - out.length);
    await meter(deps.limiter, principal);
    // A resume is bulk work: its pages go through the bulk pool, each read in a turn of its own.
    await nextTurn();
    const page = await deps.events.after(cursor, size, { ...query, bulk: true });
    out.push(...page);
    if (page.length < size) break;
    cursor = page[page.length - 1].seq;
  }
  return out;
}
