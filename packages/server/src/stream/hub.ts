import type { Principal } from '../domain/scopes.js';
import type { StoredEvent } from '../store/events/events.js';
import { matches, type StreamFilter } from './filter.js';
import { countOf, subscriptionLimit, type Subscriptions } from './protocol.js';

/** What the hub needs of a connection: who it is, what it wants, and a mark for one broadcast. */
export interface HubMember {
  readonly principal: Principal;
  readonly filter: StreamFilter;
  /** The last broadcast that visited this member (see forEachMatch). */
  mark: number;
}

const held = (f: StreamFilter): number => f.sports.size + f.leagues.size + f.games.size;

/**
 * The subscribers of one node, indexed by what they subscribe to: by game, league and sport, plus
 * the sockets that take everything their key may see. A broadcast visits only the sockets an
 * event can match instead of testing every subscriber. It also owns the subscription caps: per
 * socket, and per key over its sockets on this node.
 */
export class Hub<M extends HubMember> {
  private readonly members = new Set<M>();
  private readonly everything = new Set<M>();
  private readonly bySport = new Map<string, Set<M>>();
  private readonly byLeague = new Map<string, Set<M>>();
  private readonly byGame = new Map<string, Set<M>>();
  /** Subscriptions held per key, members and sockets still upgrading alike. */
  private readonly keyLoad = new Map<string, number>();
  private stamp = 0;

  constructor(private readonly caps: { maxSubscriptionsPerSocket: number; maxSubscriptionsPerKey: number }) {}

  get size(): number {
    return this.members.size;
  }

  [Symbol.iterator](): IterableIterator<M> {
    return this.members.values();
  }

  has(m: M): boolean {
    return this.members.has(m);
  }

  /** Indexes a connection whose filter was admitted (its share of the key's cap is already held). */
  add(m: M): void {
    this.members.add(m);
    const f = m.filter;
    if (f.everything) this.everything.add(m);
    for (const s of f.sports) this.index(this.bySport, s, m);
    for (const l of f.leagues) this.index(this.byLeague, l, m);
    for (const g of f.games) this.index(this.byGame, g, m);
  }

  /** Forgets a connection and gives its subscriptions back to its key; false if it was not there. */
  remove(m: M): boolean {
    if (!this.members.delete(m)) return false;
    const f = m.filter;
    this.everything.delete(m);
    for (const s of f.sports) this.unindex(this.bySport, s, m);
    for (const l of f.leagues) this.unindex(this.byLeague, l, m);
    for (const g of f.games) this.unindex(this.byGame, g, m);
    this.release(m.principal.keyId, f);
    return true;
  }

  /** Gives back the share of a filter that never became a member (a failed upgrade). */
  release(keyId: string, f: StreamFilter): void {
    this.load(keyId, -held(f));
  }

  /**
   * Adds validated subscriptions to a filter, all or nothing, within the socket's and the key's
   * caps, and indexes them when the filter is a member's; returns what was new. Synchronous, so
   * no other socket of the key slips in between the check and the count.
   */
  admit(keyId: string, f: StreamFilter, add: Subscriptions, member?: M): Subscriptions {
    const added = {
      sports: add.sports.filter((x) => !f.sports.has(x)),
      leagues: add.leagues.filter((x) => !f.leagues.has(x)),
      games: add.games.filter((x) => !f.games.has(x)),
    };
    const n = countOf(added);
    const { maxSubscriptionsPerSocket: socketCap, maxSubscriptionsPerKey: keyCap } = this.caps;
    if (held(f) + n > socketCap) throw subscriptionLimit(`A socket holds at most ${socketCap} subscriptions; it has ${held(f)} and this adds ${n}.`);
    const ofKey = this.keyLoad.get(keyId) ?? 0;
    if (ofKey + n > keyCap) throw subscriptionLimit(`A key holds at most ${keyCap} subscriptions over its sockets on a node; it has ${ofKey} and this adds ${n}.`);
    const indexed = member !== undefined && this.members.has(member);
    for (const s of added.sports) {
      f.sports.add(s);
      if (indexed) this.index(this.bySport, s, member);
    }
    for (const l of added.leagues) {
      f.leagues.add(l);
      if (indexed) this.index(this.byLeague, l, member);
    }
    for (const g of added.games) {
      f.games.add(g);
      if (indexed) this.index(this.byGame, g, member);
    }
    if (countOf(add) > 0) {
      f.everything = false;
      if (indexed) this.everything.delete(member);
    }
    this.load(keyId, n);
    return added;
  }

  /** Removes a member's subscriptions; returns those that were there. */
  withdraw(m: M, drop: Subscriptions): Subscriptions {
    // A message handled after its socket went: its share was given back with it already.
    if (!this.members.has(m)) return { sports: [], leagues: [], games: [] };
    const f = m.filter;
    const removed = {
      sports: [...new Set(drop.sports)].filter((x) => f.sports.delete(x)),
      leagues: [...new Set(drop.leagues)].filter((x) => f.leagues.delete(x)),
      games: [...new Set(drop.games)].filter((x) => f.games.delete(x)),
    };
    for (const s of removed.sports) this.unindex(this.bySport, s, m);
    for (const l of removed.leagues) this.unindex(this.byLeague, l, m);
    for (const g of removed.games) this.unindex(this.byGame, g, m);
    this.load(m.principal.keyId, -countOf(removed));
    return removed;
  }

  /**
   * Calls `fn` once for each member the event matches (tier and key scope included). A member in
   * several of the event's indexes (its game and its sport) is visited once: `mark` remembers the
   * broadcast that last visited it.
   */
  forEachMatch(e: StoredEvent, fn: (m: M) => void): void {
    const stamp = ++this.stamp;
    const visit = (set: Set<M> | undefined) => {
      if (!set) return;
      for (const m of set) {
        if (m.mark === stamp) continue;
        m.mark = stamp;
        if (matches(m.filter, e)) fn(m);
      }
    };
    visit(this.everything);
    visit(this.byGame.get(e.event.game_id));
    visit(this.byLeague.get(e.league));
    visit(this.bySport.get(e.sport));
  }

  private index(map: Map<string, Set<M>>, k: string, m: M): void {
    let set = map.get(k);
    if (!set) map.set(k, (set = new Set()));
    set.add(m);
  }

  private unindex(map: Map<string, Set<M>>, k: string, m: M): void {
    const set = map.get(k);
    if (!set) return;
    set.delete(m);
    if (set.size === 0) map.delete(k);
  }

  private load(keyId: string, delta: number): void {
    const n = (this.keyLoad.get(keyId) ?? 0) + delta;
    if (n > 0) this.keyLoad.set(keyId, n);
    else this.keyLoad.delete(keyId);
  }
}
