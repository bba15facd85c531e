import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../src/domain/scopes.js';
import { planOf } from '../src/domain/plans.js';
import type { StoredEvent } from '../src/store/events/events.js';
import { matches, type StreamFilter } from '../src/stream/filter.js';
import { Hub, type HubMember } from '../src/stream/hub.js';

const principal = (keyId: string, sports: string[] | null = null): Principal => ({
  keyId, name: 't', environment: 'test', plan: planOf('internal'), products: ['live'], sports, leagues: null,
});
const filter = (sports: string[] | null = null): StreamFilter => ({
  everything: true, sports: new Set(), leagues: new Set(), games: new Set(), tier: null, types: null, scopeSports: sports, scopeLeagues: null, scopeGames: null, viewerKeyId: 'key_viewer', minProbability: 0, retractionFloor: 0,
});
const event = (game: string, sport: string, league: string, tier = 'provisional'): StoredEvent => ({
  seq: 1, competitionId: 'c', seasonId: 's', sport, league, ownerKeyId: null,
  event: {
    id: 'evt_1', type: 'score', tier: tier === 'confirmed' ? 'confirmed' : 'provisional', game_id: game, sport, league, team: 'A', event_type: 'x', points: 1,
    clock: null, ts: '2026-01-01T00:00:00.000Z', confidence: { agreement: 1, reporters: 1, latency_ms: 0, probability: 1 }, schema: 'svc.event.v1',
  },
});

interface Member extends HubMember {
  id: number;
}

describe('Hub', () => {
  it('visits only the sockets an event can match: 1,000 sockets on 1,000 games, one event touches one', () => {
    const hub = new Hub<Member>({ maxSubscriptionsPerSocket: 10, maxSubscriptionsPerKey: 100_000 });
    const members: Member[] = [];
    for (let i = 0; i < 1000; i++) {
      const m: Member = { id: i, principal: principal('k'), filter: filter(), mark: 0 };
      hub.admit('k', m.filter, { sports: [], leagues: [], games: [`soccer_${i}`] });
      hub.add(m);
      members.push(m);
    }
    const got: number[] = [];
    hub.forEachMatch(event('soccer_7', 'soccer', 'wc'), (m) => got.push(m.id));
    expect(got).toEqual([7]);
    expect(members.filter((m) => m.mark !== 0).map((m) => m.id)).toEqual([7]);
  });

  it('keeps a key’s count when a removed socket’s late unsubscribe arrives', () => {
    const hub = new Hub<Member>({ maxSubscriptionsPerSocket: 10, maxSubscriptionsPerKey: 10 });
    const a: Member = { id: 1, principal: principal('k'), filter: filter(), mark: 0 };
    const b: Member = { id: 2, principal: principal('k'), filter: filter(), mark: 0 };
    hub.admit('k', a.filter, { sports: [], leagues: [], games: ['soccer_1', 'soccer_2', 'soccer_3', 'soccer_4', 'soccer_5'] });
    hub.add(a);
    hub.admit('k', b.filter, { sports: [], leagues: [], games: ['soccer_6', 'soccer_7', 'soccer_8', 'soccer_9', 'soccer_10'] });
    hub.add(b);
    hub.remove(b);
    expect(hub.withdraw(b, { sports: [], leagues: [], games: ['soccer_6', 'soccer_7'] })).toEqual({ sports: [], leagues: [], games: [] });
    // 5 held by a: 6 more is over the key's 10.
    expect(() => hub.admit('k', filter(), { sports: [], leagues: [], games: ['golf_1', 'golf_2', 'golf_3', 'golf_4', 'golf_5', 'golf_6'] })).toThrow(/at most 10/);
  });

  it('selects exactly what matches() selects, through subscribes, unsubscribes and removals', () => {
    const SPORTS = ['soccer', 'basketball'];
    const LEAGUES = ['wc', 'sbl', 'intl'];
    const GAMES = ['soccer_1', 'soccer_2', 'basketball_3'];
    const lists = fc.record({ sports: fc.subarray(SPORTS), leagues: fc.subarray(LEAGUES), games: fc.subarray(GAMES) });
    fc.assert(
      fc.property(
        fc.array(fc.record({ scope: fc.option(fc.subarray(SPORTS, { minLength: 1 }), { nil: null }), open: lists }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.record({ who: fc.nat(), op: fc.constantFrom('subscribe', 'unsubscribe', 'remove'), lists }), { maxLength: 12 }),
        (sockets, ops) => {
          const hub = new Hub<Member>({ maxSubscriptionsPerSocket: 100, maxSubscriptionsPerKey: 1000 });
          const members = sockets.map((s, id) => {
            const m: Member = { id, principal: principal(`k${id % 3}`, s.scope), filter: filter(s.scope), mark: 0 };
            hub.admit(m.principal.keyId, m.filter, s.open);
            hub.add(m);
            return m;
          });
          for (const o of ops) {
            const m = members[o.who % members.length];
            if (o.op === 'remove') hub.remove(m);
            else if (o.op === 'subscribe' && hub.has(m)) hub.admit(m.principal.keyId, m.filter, o.lists, m);
            else if (hub.has(m)) hub.withdraw(m, o.lists);
          }
          for (const [game, sport, league] of [['soccer_1', 'soccer', 'wc'], ['soccer_2', 'soccer', 'intl'], ['basketball_3', 'basketball', 'sbl'], ['soccer_9', 'soccer', 'wc']]) {
            const e = event(game, sport, league);
            const got: number[] = [];
            hub.forEachMatch(e, (m) => got.push(m.id));
            const want = members.filter((m) => hub.has(m) && matches(m.filter, e)).map((m) => m.id);
            expect(got.sort((a, b) => a - b)).toEqual(want);
          }
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });
});
