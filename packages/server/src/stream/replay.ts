import type { Principal } from '../domain/scopes.js';
import { meter } from '../http/auth.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { EventFilter, EventLog, StoredEvent } from '../store/events/events.js';
import { nextTurn } from '../export/next-turn.js';
import type { StreamFilter } from './filter.js';

/** Rows per replay read: a resume of the whole cap is a handful of bounded queries, not one huge one. */
export const REPLAY_PAGE = 1000;

/** A resume that can be promised: how many events it sends, and its pages, read as they are sent. */
export interface Replay {
  count: number;
  pages(): AsyncGenerator<StoredEvent[]>;
}

/**
 * What a resume after `since` sends (docs/stream.md "Resume"): every event after it that the
 * socket's filter matches and its key may read, in order, or null when more than `cap` match
 * (then nothing is sent and the client says `recovered: false`). The whole filter is in the
 * query (the subscription's union included): judging recovery on events filtered after a capped
 * read said `recovered: true` over a gap. What the key may read is what the live product reads:
 * without the `archive` product, the events of competitions settled before `today` are left out,
 * as `GET /v1/games/:id/events` refuses them.
 *
 * The events are counted first (their seqs only, at most `cap` + 1) and the whole resume is
 * charged then, one request per page of REPLAY_PAGE it reads (throws rate_limited past the key's
 * limit, before anything is sent); the events themselves are read a page at a time as the
 * connection takes them, so a resume holds one page in memory, not the whole cap.
 */
export async function planReplay(
  deps: { events: EventLog; limiter: RateLimiter },
  principal: Principal,
  f: StreamFilter,
  since: number,
  cap: number,
  today: string,
): Promise<Replay | null> {
  const query: EventFilter = {
    sports: f.scopeSports,
    leagues: f.scopeLeagues,
    games: f.scopeGames,
    tier: f.tier,
    types: f.types,
    viewerKeyId: f.viewerKeyId,
    minProbability: f.minProbability,
    retractionFloor: f.retractionFloor,
    ...(principal.products.includes('archive') ? {} : { settledBefore: today }),
    ...(!f.everything ? { anyOf: { sports: [...f.sports], leagues: [...f.leagues], games: [...f.games] } } : {}),
    // A resume is bulk work: its reads go through the bulk pool, beside exports.
    bulk: true,
  };
  await meter(deps.limiter, principal);
  await nextTurn();
  const seqs = await deps.events.seqsAfter(since, cap + 1, query);
  // The pages a read to the end (or one past the cap) takes: one per REPLAY_PAGE events, and the short last one.
  const pages = Math.floor(seqs.length / REPLAY_PAGE) + 1;
  for (let i = 1; i < pages; i++) await meter(deps.limiter, principal);
  if (seqs.length > cap) return null;
  return {
    count: seqs.length,
    async *pages() {
      for (let at = 0; at < seqs.length; at += REPLAY_PAGE) {
        const from = at === 0 ? since : seqs[at - 1];
        const through = seqs[Math.min(at + REPLAY_PAGE, seqs.length) - 1];
        await nextTurn();
        yield await deps.events.after(from, REPLAY_PAGE, { ...query, below: through + 1 });
      }
    },
  };
}
