// The replay and the metrics of bench/trust.ts (also used by test/consensus-trust.test.ts for
// the calibration on a fixed seed): a world (trust-world.ts) through today's rules and the current
// engine, each on its own manual clock.
import { ConsensusEngine, EVIDENCE_FEATURES, logisticOf, ManualClock, ReporterWeights, voterId, type Calibration, type ConsensusOptions, type Evidence, type Outcome, type VoterStats } from '@svc/server';
import { ConsensusEngine as TodayEngine, type Outcome as TodayOutcome } from './trust-baseline/engine.js';
import { buildWorld, worldCupMatches, type Attack, type Match, type Scenario, type World, type WorldEvent } from './trust-world.js';

const WINDOW_MS = 30_000;
/** Ticks run every second from each input for this long (deadlines, sweeps), then time jumps to the next input. */
const BUSY_MS = 130_000;

/** One event either engine published, as the metrics need it. */
interface Published {
  kind: 'provisional' | 'confirmed' | 'retracted';
  at: number;
  agreement: number;
  probability: number | null;
  official: boolean;
  evidence?: Evidence;
}

interface Cand {
  gameId: string;
  team: string;
  firstObservedAt: number;
  real: boolean;
  voters: Set<string>;
  /** Votes from honest reporters (their slips make invented scores too), and who cast them. */
  honestVotes: number;
  honestVoters: Set<string>;
  attempts: Set<number>;
  goals: Set<number>;
  provisional?: Published;
  confirmed?: Published;
  retractedAt?: number;
  /** Other voters present on the game when its provisional went out. */
  othersPresent: number;
}

/** What a run records: every candidate and the calibration pairs. */
interface RunLog {
  cands: Map<string, Cand>;
}

/** Both engines behind one face: the bench feeds them the same input. */
interface Rules {
  submit(e: Extract<WorldEvent, { kind: 'report' }>): { candidateId: string | null; outcomes: Published[]; ids: string[] };
  official(e: Extract<WorldEvent, { kind: 'official' }>): { outcomes: Published[]; ids: string[] };
  final(gameId: string): { outcomes: Published[]; ids: string[] };
  tick(): { outcomes: Published[]; ids: string[] };
}

function publishedOf(o: Outcome): Published {
  if (o.kind === 'retracted') return { kind: 'retracted', at: o.at, agreement: 0, probability: o.probability, official: false };
  return { kind: o.kind, at: o.at, agreement: o.confidence.agreement, probability: o.confidence.probability, official: o.kind === 'confirmed' && o.official, evidence: o.evidence };
}

function todayPublished(o: TodayOutcome): Published {
  if (o.kind === 'retracted') return { kind: 'retracted', at: o.at, agreement: 0, probability: null, official: false };
  return { kind: o.kind, at: o.at, agreement: o.confidence.agreement, probability: null, official: o.kind === 'confirmed' && o.official };
}

/** The weight models docs/decisions.md compares: the chosen one, today's Laplace over agreement alone, or one weight for all. */
class EqualWeights extends ReporterWeights {
  override weight(): number {
    return 0.5;
  }
  override stats(voter: string): VoterStats {
    return { ...super.stats(voter), weight: 0.5 };
  }
}

export type WeightModel = 'official' | 'laplace' | 'equal';

export interface RunOptions {
  seed: number;
  crowds: readonly number[];
  attacks: readonly Attack[];
  calibration: Calibration;
  /** The weight model (docs/decisions.md): official verdicts and Dawid–Skene, Laplace over the crowd's outcomes alone, or one weight for all. */
  model: WeightModel;
  /** Other consensus options, tried on the same input. */
  options?: Partial<ConsensusOptions>;
}

function currentRules(clock: ManualClock, o: RunOptions): Rules {
  const engine = new ConsensusEngine(clock, { ...o.options, calibration: o.calibration }, o.model === 'equal' ? new EqualWeights() : new ReporterWeights());
  const judging = o.model !== 'laplace';
  const out = (os: Outcome[]) => ({ outcomes: os.map(publishedOf), ids: os.map((o) => o.candidateId) });
  return {
    submit(e) {
      const res = engine.submit({ reporterId: voterId(e.who.keyId, e.who.reporter), keyId: e.who.keyId, gameId: e.gameId, team: e.team, points: 1, observedAt: e.observedAt, receivedAt: e.at });
      return { candidateId: res.candidateId, ...out(res.outcomes) };
    },
    official(e) {
      const res = engine.officialPlay({ gameId: e.gameId, team: e.team, points: 1, eventType: 'goal', observedAt: e.observedAt });
      if (judging) engine.judge({ play: { gameId: e.gameId, observedAt: e.observedAt, matched: res.candidateId } });
      return out(res.outcomes);
    },
    final(gameId) {
      if (judging) engine.judge({ final: true, gameId });
      return out(engine.forgetGame(gameId));
    },
    tick: () => out(engine.tick()),
  };
}

function todayRules(clock: ManualClock): Rules {
  const engine = new TodayEngine(clock);
  const out = (os: TodayOutcome[]) => ({ outcomes: os.map(todayPublished), ids: os.map((o) => o.candidateId) });
  return {
    // Today's API has no reporter: a key's reports are all its own voice.
    submit(e) {
      const res = engine.submit({ reporterId: e.who.keyId, gameId: e.gameId, team: e.team, points: 1, observedAt: e.observedAt, receivedAt: e.at });
      return { candidateId: res.candidateId, ...out(res.outcomes) };
    },
    official: (e) => out(engine.official({ gameId: e.gameId, team: e.team, points: 1, eventType: 'goal', observedAt: e.observedAt })),
    final: (gameId) => out(engine.forgetGame(gameId)),
    tick: () => out(engine.tick()),
  };
}

function isReal(match: Match, team: string, observedAt: number): boolean {
  return match.goals.some((g) => g.team === team && Math.abs(g.at - observedAt) <= WINDOW_MS);
}

/** Replays a world through one set of rules on its own clock. */
function replay(world: World, make: (clock: ManualClock) => Rules): RunLog {
  const clock = new ManualClock(world.events[0]?.at ?? 0);
  const rules = make(clock);
  const matchOf = new Map(world.matches.map((m) => [m.gameId, m]));
  const cands = new Map<string, Cand>();
  /** gameId → voter → last receipt, for "others present" at a provisional. */
  const seen = new Map<string, Map<string, number>>();
  let nextTick = Math.ceil(clock.now() / 1000) * 1000;
  let busyUntil = 0;
  const take = (r: { outcomes: Published[]; ids: string[] }) => {
    r.outcomes.forEach((p, i) => {
      const c = cands.get(r.ids[i]);
      if (!c) return;
      if (p.kind === 'provisional') {
        c.provisional = p;
        // Counted by key: a key's reporters without a record are one voice.
        const present = seen.get(c.gameId);
        const keys = new Set([...c.voters].map((v) => v.split('/')[0]));
        const others = new Set<string>();
        if (present) for (const [v, last] of present) if (!keys.has(v.split('/')[0]) && p.at - last <= 7_200_000) others.add(v.split('/')[0]);
        c.othersPresent = others.size;
      } else if (p.kind === 'confirmed') c.confirmed = p;
      else c.retractedAt = p.at;
    });
  };
  const candOf = (id: string, gameId: string, team: string, observedAt: number): Cand => {
    let c = cands.get(id);
    if (!c) {
      const match = matchOf.get(gameId);
      c = { gameId, team, firstObservedAt: observedAt, real: match ? isReal(match, team, observedAt) : false, voters: new Set(), honestVotes: 0, honestVoters: new Set(), attempts: new Set(), goals: new Set(), othersPresent: 0 };
      cands.set(id, c);
    }
    return c;
  };
  for (const e of world.events) {
    // The worker ticks every second; idle stretches (nothing open, nobody active) are skipped.
    while (nextTick <= e.at) {
      if (nextTick > busyUntil) {
        nextTick = Math.ceil(e.at / 1000) * 1000;
        if (nextTick > e.at) break;
      }
      clock.set(nextTick);
      take(rules.tick());
      nextTick += 1000;
    }
    clock.set(e.at);
    busyUntil = e.at + BUSY_MS;
    if (e.kind === 'report') {
      const voter = voterId(e.who.keyId, e.who.reporter);
      const res = rules.submit(e);
      if (res.candidateId) {
        const c = candOf(res.candidateId, e.gameId, e.team, e.observedAt);
        c.voters.add(voter);
        if (e.honest) {
          c.honestVotes += 1;
          c.honestVoters.add(voter);
        }
        if (e.attempt !== null) c.attempts.add(e.attempt);
        if (e.goal !== null) c.goals.add(e.goal);
      }
      let present = seen.get(e.gameId);
      if (!present) seen.set(e.gameId, (present = new Map()));
      present.set(voter, e.at);
      take(res);
    } else if (e.kind === 'official') {
      const res = rules.official(e);
      res.ids.forEach((id) => candOf(id, e.gameId, e.team, e.observedAt));
      take(res);
    } else {
      take(rules.final(e.gameId));
      seen.delete(e.gameId);
    }
  }
  for (let i = 0; i < 200; i++) {
    clock.advance(1000);
    take(rules.tick());
  }
  return { cands };
}

export const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Expected calibration error over ten equal-width bins, and the Brier score. */
export function calibration(pairs: [number, boolean][]): { ece: number; brier: number; n: number } {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, p: 0, y: 0 }));
  let brier = 0;
  for (const [p, y] of pairs) {
    const b = bins[Math.min(9, Math.floor(p * 10))];
    b.n += 1;
    b.p += p;
    b.y += y ? 1 : 0;
    brier += (p - (y ? 1 : 0)) ** 2;
  }
  const n = pairs.length;
  const ece = bins.reduce((s, b) => s + (b.n > 0 ? (b.n / n) * Math.abs(b.p / b.n - b.y / b.n) : 0), 0);
  return { ece, brier: n > 0 ? brier / n : NaN, n };
}

export interface Metrics {
  /** Attempts made while at least as many honest reporters as attackers were present on the game, and those confirmed. */
  attemptsWithin: number;
  inventedWithin: number;
  /** Attempts made while the attackers outnumbered the honest reporters present (none present included). */
  attemptsOut: number;
  inventedOut: number;
  /** The highest probability among the invented scores confirmed there (current rules), and how many reached 0.9. */
  maxInventedP: number;
  sureInventedOut: number;
  ghostVisibleS: number[];
  realSeen: number;
  realCrowdConfirmed: number;
  latencyS: number[];
  probabilityPairs: [number, boolean][];
  agreementPairs: [number, boolean][];
  floodReports: number;
  floodPublished: number;
  features: { evidence: Evidence; real: boolean }[];
}

export const emptyMetrics = (): Metrics => ({
  attemptsWithin: 0, inventedWithin: 0, attemptsOut: 0, inventedOut: 0, maxInventedP: 0, sureInventedOut: 0, ghostVisibleS: [], realSeen: 0, realCrowdConfirmed: 0,
  latencyS: [], probabilityPairs: [], agreementPairs: [], floodReports: 0, floodPublished: 0, features: [],
});

/**
 * Honest reporters present on the game (reported on it in the last 2 h) when each attempt began,
 * less those who voted for the invented score themselves (a slip on the attackers' side).
 */
function honestPresent(world: World, log: RunLog): Map<number, number> {
  const sided = new Map<number, Set<string>>();
  for (const c of log.cands.values()) {
    if (c.real || c.honestVotes === 0) continue;
    for (const a of c.attempts) {
      const set = sided.get(a) ?? new Set<string>();
      for (const v of c.honestVoters) set.add(v);
      sided.set(a, set);
    }
  }
  const byGame = new Map<string, Map<string, number>>();
  const attemptsByTime = [...world.attempts].sort((a, b) => a.at - b.at);
  const out = new Map<number, number>();
  let k = 0;
  for (const e of world.events) {
    while (k < attemptsByTime.length && attemptsByTime[k].at <= e.at) {
      const a = attemptsByTime[k++];
      const seen = byGame.get(a.gameId);
      const onTheirSide = sided.get(a.id);
      let n = 0;
      if (seen) for (const [v, last] of seen) if (a.at - last <= 7_200_000 && !onTheirSide?.has(v)) n += 1;
      out.set(a.id, n);
    }
    if (e.kind === 'report' && e.honest) {
      let seen = byGame.get(e.gameId);
      if (!seen) byGame.set(e.gameId, (seen = new Map()));
      seen.set(voterId(e.who.keyId, e.who.reporter), e.at);
    }
  }
  return out;
}

function measure(world: World, log: RunLog, m: Metrics, attack: Attack): void {
  const present = honestPresent(world, log);
  const within = (id: number) => {
    const a = world.attempts[id];
    const n = present.get(id) ?? 0;
    return n > 0 && n >= a.attackers;
  };
  for (const a of world.attempts) {
    if (within(a.id)) m.attemptsWithin += 1;
    else m.attemptsOut += 1;
  }
  const inventedAttempts = new Map<number, number>();
  const firstHonest = new Map<number, number>();
  const honestSaw = new Map<number, number>();
  for (const e of world.events) {
    if (e.kind !== 'report' || !e.honest || e.goal === null) continue;
    honestSaw.set(e.goal, (honestSaw.get(e.goal) ?? 0) + 1);
    if (!firstHonest.has(e.goal)) firstHonest.set(e.goal, e.at);
  }
  const goalConfirmed = new Map<number, { at: number; crowd: boolean }>();
  for (const c of log.cands.values()) {
    for (const p of [c.provisional, c.confirmed]) {
      if (!p || p.official) continue;
      if (p.probability !== null) m.probabilityPairs.push([p.probability, c.real]);
      m.agreementPairs.push([p.agreement, c.real]);
      if (p.evidence) m.features.push({ evidence: p.evidence, real: c.real });
    }
    if (!c.real) {
      if (c.confirmed && !c.confirmed.official) for (const a of c.attempts) inventedAttempts.set(a, Math.max(inventedAttempts.get(a) ?? 0, c.confirmed.probability ?? 0));
      // A ghost: an invented score one reporter, or one attacker's key, backs alone, seen by two or more others.
      const keys = new Set([...c.voters].map((v) => v.split('/')[0]));
      if (c.provisional && c.othersPresent >= 2 && keys.size === 1 && (c.voters.size === 1 || c.honestVotes === 0)) {
        m.ghostVisibleS.push(((c.retractedAt ?? c.confirmed?.at ?? c.provisional.at + 3_600_000) - c.provisional.at) / 1000);
      }
      if (attack === 'flood' && c.provisional && c.attempts.size > 0) m.floodPublished += 1;
    }
    for (const g of c.goals) {
      if (!c.confirmed) continue;
      const prev = goalConfirmed.get(g);
      if (!prev || c.confirmed.at < prev.at) goalConfirmed.set(g, { at: c.confirmed.at, crowd: !c.confirmed.official });
    }
  }
  if (attack === 'flood') m.floodReports += world.attempts.length;
  for (const [a, p] of inventedAttempts) {
    if (within(a)) m.inventedWithin += 1;
    else {
      m.inventedOut += 1;
      m.maxInventedP = Math.max(m.maxInventedP, p);
      if (p >= 0.9) m.sureInventedOut += 1;
    }
  }
  for (const [g, n] of honestSaw) {
    if (n < 3) continue;
    m.realSeen += 1;
    const conf = goalConfirmed.get(g);
    if (conf?.crowd) m.realCrowdConfirmed += 1;
    if (conf) m.latencyS.push((conf.at - (firstHonest.get(g) ?? conf.at)) / 1000);
  }
}

function attackerCounts(h: number): { within: number[]; outnumber: number } {
  return { within: [...new Set([1, Math.ceil(h / 2), h])], outnumber: 2 * h };
}

export interface Row {
  attack: Attack;
  honest: number;
  now: Metrics;
  today: Metrics;
}

/** Every scenario of `o.attacks` × `o.crowds` × attackers (1, H/2, H and 2H), through both sets of rules. */
export function runScenarios(o: RunOptions): Row[] {
  const seed = o.seed;
  const matches = worldCupMatches(seed);
  const rows: Row[] = [];
  for (const attack of o.attacks) {
    for (const honest of o.crowds) {
      const row: Row = { attack, honest, now: emptyMetrics(), today: emptyMetrics() };
      const { within, outnumber } = attackerCounts(honest);
      for (const attackers of [...within, outnumber]) {
        const s: Scenario = { attack, honest, attackers, seed };
        const world = buildWorld(s, matches);
        measure(world, replay(world, (c) => currentRules(c, o)), row.now, attack);
        measure(world, replay(world, todayRules), row.today, attack);
      }
      rows.push(row);
    }
  }
  return rows;
}

/**
 * The probability's calibration (probability.ts): a logistic regression of official truth on the
 * evidence (Newton's method, damped, with a small ridge), then an isotonic map of its estimate
 * (pool-adjacent-violators over the training events, kept as at most 24 knots).
 */
export function fit(features: { evidence: Evidence; real: boolean }[]): Calibration {
  const n = EVIDENCE_FEATURES.length + 1;
  const rows = features.map((f) => [1, ...EVIDENCE_FEATURES.map((k) => f.evidence[k])]);
  const ys = features.map((f) => (f.real ? 1 : 0));
  const ridge = 1;
  let w = new Array<number>(n).fill(0);
  for (let iter = 0; iter < 300; iter++) {
    const g = w.map((v) => -ridge * v);
    const h = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? ridge : 0)));
    rows.forEach((x, r) => {
      const z = x.reduce((acc, v, i) => acc + v * w[i], 0);
      const p = 1 / (1 + Math.exp(-z));
      for (let i = 0; i < n; i++) {
        g[i] += (ys[r] - p) * x[i];
        for (let j = 0; j < n; j++) h[i][j] += p * (1 - p) * x[i] * x[j];
      }
    });
    const full = solve(h, g);
    const scale = Math.min(1, 1 / Math.hypot(...full));
    const before = w;
    // Each coefficient keeps the sign its evidence has (SIGNS): more silence never makes a play likelier.
    w = w.map((v, i) => clampSign(v + full[i] * scale, i === 0 ? 0 : SIGNS[EVIDENCE_FEATURES[i - 1]]));
    if (Math.hypot(...w.map((v, i) => v - before[i])) < 1e-9) break;
  }
  const weights = w.map(round4);
  // Pool adjacent violators over (logistic estimate, truth), in order of the estimate.
  const pts = features.map((f, i) => ({ x: logisticOf(f.evidence, { weights, knots: [] }), y: ys[i] })).sort((a, b) => a.x - b.x);
  const blocks: { x: number; y: number; n: number }[] = [];
  for (const p of pts) {
    blocks.push({ x: p.x, y: p.y, n: 1 });
    while (blocks.length > 1 && blocks[blocks.length - 2].y / blocks[blocks.length - 2].n >= blocks[blocks.length - 1].y / blocks[blocks.length - 1].n) {
      const b = blocks.pop();
      const a = blocks[blocks.length - 1];
      if (!b) break;
      a.x = (a.x * a.n + b.x * b.n) / (a.n + b.n);
      a.y += b.y;
      a.n += b.n;
    }
  }
  // Knots at the blocks' mean estimates; merged down to 24 by joining the smallest neighbours.
  let knots = blocks.map((b) => ({ x: b.x, y: b.y, n: b.n }));
  while (knots.length > 24) {
    let best = 0;
    for (let i = 1; i < knots.length - 1; i++) if (knots[i].n + knots[i + 1].n < knots[best].n + knots[best + 1].n) best = i;
    const a = knots[best];
    const b = knots[best + 1];
    knots.splice(best, 2, { x: (a.x * a.n + b.x * b.n) / (a.n + b.n), y: a.y + b.y, n: a.n + b.n });
  }
  knots = knots.map((k) => ({ ...k, y: k.y / k.n }));
  return { weights, knots: knots.map((k) => [round4(k.x), round4(k.y)] as [number, number]) };
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The direction each piece of evidence may move the probability: 1 up, -1 down, 0 either. */
const SIGNS: Record<(typeof EVIDENCE_FEATURES)[number], number> = { votes: 1, silence: 1, contested: -1, newcomers: -1, conflict: -1, confirm: 0, voices: 0, liars: -1, alone: -1 };
const clampSign = (v: number, sign: number) => (sign > 0 ? Math.max(0, v) : sign < 0 ? Math.min(0, v) : v);

/** Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((r, i) => [...r, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((r, i) => r[n] / r[i]);
}

export function merge(ms: Metrics[]): Metrics {
  const out = emptyMetrics();
  for (const m of ms) {
    out.attemptsWithin += m.attemptsWithin;
    out.inventedWithin += m.inventedWithin;
    out.attemptsOut += m.attemptsOut;
    out.inventedOut += m.inventedOut;
    out.maxInventedP = Math.max(out.maxInventedP, m.maxInventedP);
    out.sureInventedOut += m.sureInventedOut;
    out.ghostVisibleS.push(...m.ghostVisibleS);
    out.realSeen += m.realSeen;
    out.realCrowdConfirmed += m.realCrowdConfirmed;
    out.latencyS.push(...m.latencyS);
    out.probabilityPairs.push(...m.probabilityPairs);
    out.agreementPairs.push(...m.agreementPairs);
    out.floodReports += m.floodReports;
    out.floodPublished += m.floodPublished;
  }
  return out;
}

