import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '../src/store/events/events.js';
import { listen, testApp, type TestApp } from './helpers.js';
import { connect, type Frame, type StreamClient } from './ws-client.js';

/**
 * A model of one stream socket against a reference filter: random scopes, opening filters,
 * subscribe/unsubscribe sequences and tiers on a real server through real sockets; after each
 * sequence the live events and a resume from before them must be exactly what the reference
 * filter selects, in order.
 */

const GAMES = [
  { game: 'soccer_9901', sport: 'soccer', league: 'intl' },
  { game: 'soccer_9902', sport: 'soccer', league: 'wc' },
  { game: 'basketball_9903', sport: 'basketball', league: 'sbl' },
  { game: 'basketball_9904', sport: 'basketball', league: 'sbl' },
  { game: 'golf_9905', sport: 'golf', league: 'sgt' },
] as const;
const SPORTS = ['soccer', 'basketball', 'golf'];
const LEAGUES = ['intl', 'wc', 'sbl', 'sgt'];
const GAME_IDS = GAMES.map((g) => g.game);
const TIERS = ['provisional', 'confirmed'] as const;

interface Lists {
  sports: string[];
  leagues: string[];
  games: string[];
}
interface Op extends Lists {
  op: 'subscribe' | 'unsubscribe';
}

/** The reference: what the README says a socket receives. */
class Reference {
  sports = new Set<string>();
  leagues = new Set<string>();
  games = new Set<string>();
  /** Opened without sport, league or game and not subscribed since: everything in scope. */
  everything: boolean;
  constructor(
    open: Lists,
    readonly tier: 'provisional' | 'confirmed' | null,
    readonly scope: { sports: string[] | null; leagues: string[] | null },
  ) {
    this.add(open);
    this.everything = open.sports.length + open.leagues.length + open.games.length === 0;
  }
  allowed(l: Lists): boolean {
    const sportOfLeague = (x: string) => GAMES.find((g) => g.league === x)?.sport ?? '';
    const sportOfGame = (x: string) => x.split('_')[0];
    const sportOk = (s: string) => this.scope.sports === null || this.scope.sports.includes(s);
    const leagueOk = (x: string) => this.scope.leagues === null || this.scope.leagues.includes(x);
    return l.sports.every(sportOk) && l.leagues.every((x) => sportOk(sportOfLeague(x)) && leagueOk(x)) && l.games.every((x) => sportOk(sportOfGame(x)));
  }
  add(l: Lists): Lists {
    const added = {
      sports: [...new Set(l.sports)].filter((x) => !this.sports.has(x)),
      leagues: [...new Set(l.leagues)].filter((x) => !this.leagues.has(x)),
      games: [...new Set(l.games)].filter((x) => !this.games.has(x)),
    };
    added.sports.forEach((x) => this.sports.add(x));
    added.leagues.forEach((x) => this.leagues.add(x));
    added.games.forEach((x) => this.games.add(x));
    if (l.sports.length + l.leagues.length + l.games.length > 0) this.everything = false;
    return added;
  }
  remove(l: Lists): Lists {
    return {
      sports: [...new Set(l.sports)].filter((x) => this.sports.delete(x)),
      leagues: [...new Set(l.leagues)].filter((x) => this.leagues.delete(x)),
      games: [...new Set(l.games)].filter((x) => this.games.delete(x)),
    };
  }
  matches(e: { sport: string; league: string; game_id: string; tier: string }): boolean {
    if (this.tier && e.tier !== this.tier) return false;
    if (this.scope.sports && !this.scope.sports.includes(e.sport)) return false;
    if (this.scope.leagues && !this.scope.leagues.includes(e.league)) return false;
    if (this.everything) return true;
    return this.sports.has(e.sport) || this.leagues.has(e.league) || this.games.has(e.game_id);
  }
}

const subset = <T>(xs: readonly T[]) => fc.subarray([...xs]);
const lists = fc.record({ sports: subset(SPORTS), leagues: subset(LEAGUES), games: subset(GAME_IDS) });
const scenario = fc.record({
  scope: fc.record({
    sports: fc.option(fc.subarray(SPORTS, { minLength: 1 }), { nil: null }),
    leagues: fc.option(fc.subarray(LEAGUES, { minLength: 1 }), { nil: null }),
  }),
  open: lists,
  tier: fc.constantFrom(null, ...TIERS),
  pipelined: fc.boolean(),
  /** Where the live batch is cut before its halves are published in reverse order. */
  split: fc.integer({ min: 0, max: GAMES.length * TIERS.length }),
  ops: fc.array(fc.record({ op: fc.constantFrom('subscribe' as const, 'unsubscribe' as const), sports: subset(SPORTS), leagues: subset(LEAGUES), games: subset(GAME_IDS) }), { maxLength: 6 }),
});

describe('stream model: subscribe, unsubscribe and resume against a reference filter', () => {
  let t: TestApp;
  let wsBase: string;
  const open: StreamClient[] = [];
  beforeAll(async () => {
    t = await testApp();
    wsBase = (await listen(t)).ws;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const query = (l: Lists, tier: string | null, since?: string) => {
    const q = new URLSearchParams();
    if (l.sports.length) q.set('sport', l.sports.join(','));
    if (l.leagues.length) q.set('league', l.leagues.join(','));
    if (l.games.length) q.set('game', l.games.join(','));
    if (tier) q.set('tier', tier);
    if (since) q.set('since', since);
    const s = q.toString().replaceAll('%2C', ',');
    return s ? `?${s}` : '';
  };
  const socket = async (q: string, key: string): Promise<StreamClient | number> => {
    const c = await connect(`${wsBase}/v1/stream${q}`, key).catch((e: { status: number }) => e.status);
    if (typeof c === 'number') return c;
    open.push(c);
    await c.until((x) => x.frames.length > 0, 5000, 'the subscribed frame');
    return c;
  };
  const reply = async (c: StreamClient, msg: unknown): Promise<Frame> => {
    const before = c.frames.filter((f) => f.type !== 'heartbeat').length;
    c.send(msg);
    await c.until((x) => x.frames.filter((f) => f.type !== 'heartbeat').length > before, 5000, 'a reply');
    return c.frames.filter((f) => f.type !== 'heartbeat')[before];
  };
  /** Waits until everything sent before the ping has arrived (control frames queue behind events). */
  const settle = async (c: StreamClient) => {
    const pongs = c.frames.filter((f) => f.type === 'pong').length;
    c.send({ op: 'ping' });
    await c.until((x) => x.frames.filter((f) => f.type === 'pong').length > pongs, 5000, 'pong');
  };
  const batch = (): NewEvent[] =>
    GAMES.flatMap((g, i) =>
      TIERS.map((tier) => ({
        type: 'score', tier, game_id: g.game, competition_id: `${g.game}_c`, sport: g.sport, league: g.league, season_id: `${g.league}_2026`,
        team: 'AAA', event_type: 'goal', points: i + 1, clock: null, ts: new Date().toISOString(), agreement: 1, reporters: 3, latency_ms: 1, probability: 1,
        provisional_id: null, retracted_id: null,
      })),
    );
  const ids = (events: StoredEvent[], ref: Reference) => events.filter((e) => ref.matches({ sport: e.sport, league: e.league, game_id: e.event.game_id, tier: e.event.tier })).map((e) => e.event.id);

  it('matches the reference on every seeded run', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const key = await t.key({ products: ['live'], sports: s.scope.sports ?? undefined, leagues: s.scope.leagues ?? undefined });
        const ref = new Reference({ sports: [], leagues: [], games: [] }, s.tier, s.scope);
        const c = await socket(query(s.open, s.tier), key);
        if (!ref.allowed(s.open)) {
          expect(c).toBe(403);
          return;
        }
        if (typeof c === 'number') throw new Error(`upgrade refused with ${c}`);
        const first = c.frames[0];
        expect(first).toMatchObject({ type: 'subscribed', recovered: false, tier: s.tier });
        const opened = new Reference(s.open, s.tier, s.scope);
        Object.assign(ref, { sports: opened.sports, leagues: opened.leagues, games: opened.games, everything: opened.everything });
        // Pipelined: every message sent at once; the answers must still come in message order.
        const answers: Frame[] = [];
        if (s.pipelined) {
          const before = c.frames.length;
          for (const op of s.ops) c.send(op);
          await c.until((x) => x.frames.slice(before).filter((f) => f.type !== 'heartbeat').length >= s.ops.length, 5000, 'every answer');
          answers.push(...c.frames.slice(before).filter((f) => f.type !== 'heartbeat'));
        }
        for (const [i, op] of (s.ops as Op[]).entries()) {
          const answer = s.pipelined ? answers[i] : await reply(c, op);
          if (op.op === 'subscribe' && !ref.allowed(op)) {
            expect(answer).toMatchObject({ type: 'error', code: 'sport_not_in_scope' });
            continue;
          }
          const changed = op.op === 'subscribe' ? ref.add(op) : ref.remove(op);
          expect(answer).toMatchObject({ type: 'subscribed', op: op.op, ...changed });
        }
        const [anchor] = await t.services.events.append([batch()[0]]);
        await t.services.bus.publish([anchor]);
        const live = await t.services.events.append(batch());
        // The bus as a cluster can deliver it: the second half first, then the first, then a repeat.
        await t.services.bus.publish(live.slice(s.split));
        await t.services.bus.publish(live.slice(0, s.split));
        await t.services.bus.publish([anchor, live[0]]);
        await settle(c);
        const want = ids([anchor, ...live], ref);
        expect(c.events().map((e) => e.id)).toEqual(want);
        // A resume from before the batch with the opening filter, while more events are published.
        const more = (async () => {
          const extra = await t.services.events.append(batch());
          await t.services.bus.publish(extra);
          return extra;
        })();
        const resumed = await socket(query(s.open, s.tier, anchor.event.id), key);
        const extra = await more;
        if (typeof resumed === 'number') throw new Error(`resume refused with ${resumed}`);
        expect(resumed.frames[0]).toMatchObject({ type: 'subscribed', recovered: true });
        await settle(resumed);
        expect(resumed.events().map((e) => e.id)).toEqual(ids([...live, ...extra], new Reference(s.open, s.tier, s.scope)));
        c.close();
        resumed.close();
      }),
      { seed: Number(process.env.MODEL_SEED ?? 20260611), numRuns: Number(process.env.MODEL_RUNS ?? 60), endOnFailure: true },
    );
  });
});
