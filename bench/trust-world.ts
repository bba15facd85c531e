// The world bench/trust.ts replays: real World Cup matches (2014, 2018, 2022) with every goal at
// its minute, an honest crowd reporting them and attackers of one kind. Everything the crowd and
// the attackers do is drawn from the stated model below with a seeded PRNG, so a seed names one
// input, replayed through today's rules and the current ones alike.
import { goalTiming, loadWorldCup, parseMinute } from '@svc/server';

export const ATTACKS = ['troll', 'swarm', 'colluders', 'sleepers', 'flippers', 'flood'] as const;
export type Attack = (typeof ATTACKS)[number];

/**
 * The model (docs/consensus.md "Threat model" states it too). Honest reporters watch whole
 * matches; each goal is missed with `missRate`, reported for the wrong team with `slipRate`,
 * noticed 0–2 s late and sent after a log-normal delay (median 2 s, σ 0.8, capped at 60 s).
 * Every third honest reporter is a fan app's user (one key, a `reporter` each); the others have
 * keys of their own. The official feed posts each goal 15–40 s after it happened, in order, and
 * the `final` play 15–40 s after the end. Attacks start after `warmup` matches (the honest crowd
 * has a record by then); sleepers report honestly until match `sleepFrom`, then lie together.
 */
export const MODEL = {
  missRate: 0.1,
  slipRate: 0.03,
  perceptionS: 2,
  delayMedianS: 2,
  delaySigma: 0.8,
  delayCapS: 60,
  officialLagS: [15, 40] as [number, number],
  warmup: 16,
  sleepFrom: 64,
  /** Mean game minutes between one attacker group's attempts (trolls: each troll on its own). */
  attemptEveryMin: { troll: 30, swarm: 20, colluders: 20, sleepers: 25, flippers: 0, flood: 45 } satisfies Record<Attack, number>,
  /** Coordinated attackers send within this many seconds of each other. */
  burstS: 3,
  /** A flooder sends this many invented scores, 31 s apart in observed time, at each attempt. */
  floodReports: 20,
  /** An invented score is never within this many seconds of a real goal of the same team. */
  clearanceS: 40,
};

/** Seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rand: () => number): number {
  const u = Math.max(1e-12, rand());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

const logNormalS = (rand: () => number, median: number, sigma: number, cap: number) => Math.min(cap, median * Math.exp(sigma * normal(rand)));
const exponential = (rand: () => number, mean: number) => -mean * Math.log(Math.max(1e-12, 1 - rand()));

export interface Goal {
  index: number;
  gameId: string;
  at: number;
  team: 'H' | 'A';
}

export interface Match {
  gameId: string;
  start: number;
  end: number;
  goals: Goal[];
}

const T0 = Date.parse('2026-06-11T00:00:00.000Z');
/** Matches are played one after another, 4 hours apart (a match, its official final, quiet). */
const MATCH_SPACING_MS = 4 * 3_600_000;

/** Every match of the three World Cups with its goals, in order; goal times fall within their minute. */
export function worldCupMatches(seed: number): Match[] {
  const rand = rng(seed ^ 0x5eed);
  const out: Match[] = [];
  let goalIndex = 0;
  for (const year of [2014, 2018, 2022]) {
    for (const m of loadWorldCup(year).matches) {
      const gameId = `wc_${out.length}`;
      const start = T0 + out.length * MATCH_SPACING_MS;
      const extraTime = m.score?.et !== undefined;
      const goals: Goal[] = [];
      for (const [list, team] of [[m.goals1 ?? [], 'H'], [m.goals2 ?? [], 'A']] as const) {
        for (const g of list) {
          const p = parseMinute(g.minute, g.offset);
          const t = goalTiming(p.minute, p.offset, extraTime);
          goals.push({ index: 0, gameId, at: start + Math.round((t.elapsed - 1) * 60_000 + rand() * 60_000), team });
        }
      }
      goals.sort((a, b) => a.at - b.at);
      for (const g of goals) g.index = goalIndex++;
      const end = start + (extraTime ? 145 : 110) * 60_000;
      out.push({ gameId, start, end, goals });
    }
  }
  return out;
}

export interface Reporter {
  keyId: string;
  reporter?: string;
}

export type WorldEvent =
  | { kind: 'report'; at: number; gameId: string; who: Reporter; team: string; observedAt: number; honest: boolean; goal: number | null; attempt: number | null }
  | { kind: 'official'; at: number; gameId: string; team: string; observedAt: number; goal: number }
  | { kind: 'final'; at: number; gameId: string };

export interface Scenario {
  attack: Attack;
  honest: number;
  attackers: number;
  seed: number;
}

export interface Attempt {
  id: number;
  gameId: string;
  /** When its first report was sent. */
  at: number;
  /** Identities taking part (a swarm's count, not its one key). */
  attackers: number;
}

export interface World {
  matches: Match[];
  events: WorldEvent[];
  attempts: Attempt[];
  /** Honest reporters' voter keys, for counting who saw a goal. */
  honest: Reporter[];
}

const other = (team: string) => (team === 'H' ? 'A' : 'H');

/** The input of one scenario: every report, official play and final, in time order. */
export function buildWorld(s: Scenario, matches: Match[]): World {
  const rand = rng(s.seed * 1_000_003 + s.honest * 101 + s.attackers * 7 + ATTACKS.indexOf(s.attack) * 13);
  const events: WorldEvent[] = [];
  const attempts: Attempt[] = [];
  const honest: Reporter[] = Array.from({ length: s.honest }, (_, i) => (i % 3 === 2 ? { keyId: 'fanapp', reporter: `fan${i}` } : { keyId: `honest${i}` }));
  const attackers: Reporter[] = Array.from({ length: s.attackers }, (_, i) =>
    s.attack === 'swarm' ? { keyId: 'swarm', reporter: `sock${i}` } : { keyId: `${s.attack}${i}` },
  );
  const report = (at: number, gameId: string, who: Reporter, team: string, observedAt: number, honestReport: boolean, goal: number | null, attempt: number | null) =>
    events.push({ kind: 'report', at: Math.round(at), gameId, who, team, observedAt: Math.round(observedAt), honest: honestReport, goal, attempt });
  /** A crowd member reporting a goal as an honest one would (misses and slips included). */
  const reportGoal = (who: Reporter, g: Goal, isHonest: boolean) => {
    if (rand() < MODEL.missRate) return;
    const seen = g.at + rand() * MODEL.perceptionS * 1000;
    const team = rand() < MODEL.slipRate ? other(g.team) : g.team;
    report(seen + logNormalS(rand, MODEL.delayMedianS, MODEL.delaySigma, MODEL.delayCapS) * 1000, g.gameId, who, team, seen, isHonest, team === g.team ? g.index : null, null);
  };
  /** Moments of a match for invented scores: Poisson, never near a real goal of the same team. */
  const inventions = (m: Match, everyMin: number): { at: number; team: string }[] => {
    const out: { at: number; team: string }[] = [];
    for (let t = m.start + 60_000 + exponential(rand, everyMin * 60_000); t < m.end - 60_000; t += exponential(rand, everyMin * 60_000)) {
      const team = rand() < 0.5 ? 'H' : 'A';
      if (m.goals.some((g) => g.team === team && Math.abs(g.at - t) < MODEL.clearanceS * 1000)) continue;
      out.push({ at: t, team });
    }
    return out;
  };
  const lieTogether = (group: Reporter[], gameId: string, at: number, team: string) => {
    const id = attempts.length;
    const sends = group.map((who) => {
      const observed = at + rand() * 1000;
      return { who, observed, at: observed + rand() * MODEL.burstS * 1000 };
    });
    attempts.push({ id, gameId, at: Math.min(...sends.map((x) => x.at)), attackers: group.length });
    for (const x of sends) report(x.at, gameId, x.who, team, x.observed, false, null, id);
  };

  matches.forEach((m, i) => {
    for (const g of m.goals) for (const who of honest) reportGoal(who, g, true);
    // The official feed, in order, then the final play.
    let prev = m.start;
    for (const g of m.goals) {
      const at = Math.max(prev, g.at + (MODEL.officialLagS[0] + rand() * (MODEL.officialLagS[1] - MODEL.officialLagS[0])) * 1000);
      events.push({ kind: 'official', at: Math.round(at), gameId: m.gameId, team: g.team, observedAt: g.at, goal: g.index });
      prev = at;
    }
    events.push({ kind: 'final', at: Math.round(Math.max(prev, m.end) + (MODEL.officialLagS[0] + rand() * 10) * 1000), gameId: m.gameId });

    const attacking = i >= MODEL.warmup && s.attackers > 0;
    switch (s.attack) {
      case 'troll':
        if (attacking) for (const who of attackers) for (const x of inventions(m, MODEL.attemptEveryMin.troll)) lieTogether([who], m.gameId, x.at, x.team);
        break;
      case 'swarm':
        // Every identity of the key, and the key's own voice, post the same invented score.
        if (attacking) for (const x of inventions(m, MODEL.attemptEveryMin.swarm)) lieTogether([...attackers, { keyId: 'swarm' }], m.gameId, x.at, x.team);
        break;
      case 'colluders':
        if (attacking) for (const x of inventions(m, MODEL.attemptEveryMin.colluders)) lieTogether(attackers, m.gameId, x.at, x.team);
        break;
      case 'sleepers':
        // Honest on every goal, all along (their record); from sleepFrom on they also lie together.
        for (const g of m.goals) for (const who of attackers) reportGoal(who, g, false);
        if (i >= MODEL.sleepFrom) for (const x of inventions(m, MODEL.attemptEveryMin.sleepers)) lieTogether(attackers, m.gameId, x.at, x.team);
        break;
      case 'flippers':
        // At each real goal, every flipper reports it for the other team, as fast as the crowd.
        if (attacking) {
          for (const g of m.goals) {
            const id = attempts.length;
            const sends = attackers.map((who) => {
              const seen = g.at + rand() * MODEL.perceptionS * 1000;
              return { who, seen, at: seen + logNormalS(rand, MODEL.delayMedianS, MODEL.delaySigma, MODEL.delayCapS) * 1000 };
            });
            attempts.push({ id, gameId: m.gameId, at: Math.min(...sends.map((x) => x.at)), attackers: sends.length });
            for (const x of sends) report(x.at, m.gameId, x.who, other(g.team), x.seen, false, null, id);
          }
        }
        break;
      case 'flood':
        // Each flooder sends a burst of invented scores of its own, observed 31 s apart so none joins
        // another (flooders do not coordinate: that would be colluding).
        if (attacking) {
          for (const x of inventions(m, MODEL.attemptEveryMin.flood)) {
            for (const who of attackers) {
              const from = x.at - rand() * 600_000;
              for (let k = 0; k < MODEL.floodReports; k++) {
                const id = attempts.length;
                const observed = from - k * 31_000 - rand() * 5_000;
                attempts.push({ id, gameId: m.gameId, at: x.at + k * 100, attackers: 1 });
                report(x.at + k * 100, m.gameId, who, rand() < 0.5 ? 'H' : 'A', observed, false, null, id);
              }
            }
          }
        }
        break;
    }
  });
  events.sort((a, b) => a.at - b.at || kindOrder(a) - kindOrder(b));
  return { matches, events, attempts, honest };
}

const kindOrder = (e: WorldEvent) => (e.kind === 'report' ? 0 : e.kind === 'official' ? 1 : 2);
