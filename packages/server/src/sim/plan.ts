import type { ReportInput } from '@svc/schema';
import type { PlayInput } from '@svc/schema';
import type { SimAttack } from '../config.js';
import { isoTime } from '../domain/clock.js';
import { chance, exponential, logNormal, pickIndex, uniform, type Random } from './random.js';
import type { Replay, ReplayPlay } from './replay.js';
import { openingPlay } from './timeline.js';

/** The default speed: the real-time figures below (delays, lags) are meant at this speed. */
export const DEFAULT_SPEED = 10;

export interface CrowdOptions {
  /** Reporters in the crowd; with the `troll` attack, the last one is dishonest. */
  reporters: number;
  /** The attackers the crowd takes (SVC_SIMULATOR_ATTACKS, sim/README.md "Attackers"). */
  attacks: readonly SimAttack[];
  /** Chance that a reporter misses a play. */
  missRate: number;
  /** Chance that a report names the wrong team (soccer) or the wrong team or points (basketball). */
  wrongRate: number;
  /** Log-normal delay between seeing a play and sending the report, in real ms at the default speed. */
  delayMedianMs: number;
  delaySigma: number;
  delayCapMs: number;
  /** Reporters notice a play up to this many game seconds after it happened. */
  perceptionS: number;
  /** Mean game seconds between the dishonest reporter's invented scores. */
  fakeEveryS: { soccer: number; basketball: number };
}

export interface OfficialOptions {
  /** The official feed posts each play this long after it happened (real ms at the default speed). */
  lagMs: [number, number];
}

export const DEFAULT_CROWD: CrowdOptions = {
  reporters: 6,
  attacks: ['troll'],
  missRate: 0.1,
  wrongRate: 0.03,
  delayMedianMs: 1500,
  delaySigma: 0.7,
  delayCapMs: 30_000,
  perceptionS: 2,
  fakeEveryS: { soccer: 25 * 60, basketball: 8 * 60 },
};

export const DEFAULT_OFFICIAL: OfficialOptions = { lagMs: [15_000, 40_000] };

/**
 * Maps game seconds to two clocks. `real` is when a play happens in the replay (the game runs
 * `speed` times faster than life). `world` is the wall-clock time the simulated world lives in:
 * game time at its natural pace, ending at the real end of the replay. Reports' `observed_at` and
 * plays' `ts` use it so the consensus rules, which compare observation times (30 s window, 5 s
 * duplicate window), see plays exactly as far apart as in a real game. It never runs ahead of
 * real time, since the service clamps an `observed_at` in the future to its arrival.
 */
export class GameClock {
  private readonly worldStart: number;
  constructor(
    readonly startMs: number,
    readonly speed: number,
    duration: number,
  ) {
    this.worldStart = startMs - duration * 1000 * (1 - 1 / speed);
  }
  real(s: number): number {
    return this.startMs + (s * 1000) / this.speed;
  }
  world(s: number): number {
    return this.worldStart + s * 1000;
  }
}

export interface PlanTiming {
  /**
   * Real-time delays are stated for the default speed and shrink in proportion at higher speeds,
   * so a fast replay keeps the same order of things: crowd first, official feed later.
   */
  delayScale: number;
  /** Sends falling due within this many real ms go out as one batch. */
  batchMs: number;
}

export function planTiming(speed: number): PlanTiming {
  const delayScale = Math.min(1, DEFAULT_SPEED / speed);
  return { delayScale, batchMs: Math.max(30, 250 * delayScale) };
}

export interface ReportSend {
  at: number;
  /** A crowd member (index into the crowd's keys)… */
  reporter: number;
  /** …or an attacker's key (ATTACKER_KEYS), which then sends it. */
  attacker?: string;
  /** The attack it belongs to (the troll's inventions and every attacker's reports). */
  attack?: SimAttack;
  reports: ReportInput[];
  /** Parallel to `reports`: true for a score that never happened. */
  fake: boolean[];
}

export interface PlaySend {
  at: number;
  plays: PlayInput[];
}

const SHOT: Record<number, string> = { 1: 'free_throw', 2: 'two_pointer', 3: 'three_pointer' };
/** A fake is placed at least this far (game s) from every real play worth the same points, so it cannot join one's candidate. */
const FAKE_CLEARANCE_S = 40;

/** The keys each attack sends from (besides the troll, the crowd's last reporter). */
export const ATTACKER_KEYS: Record<Exclude<SimAttack, 'troll'>, readonly string[]> = {
  swarm: ['swarm'],
  colluders: ['colluder-1', 'colluder-2', 'colluder-3'],
  sleepers: ['sleeper-1', 'sleeper-2'],
  flippers: ['flipper-1', 'flipper-2'],
};

export const attackerKeys = (attacks: readonly SimAttack[]): string[] => attacks.flatMap((a) => (a === 'troll' ? [] : ATTACKER_KEYS[a]));

/** Identities a swarm's key names in `reporter`, and the mean game time between attempts of the other attacks. */
const SWARM_SIZE = 8;
const ATTEMPT_EVERY_S = { soccer: 30 * 60, basketball: 10 * 60 };
/** Flippers flip a real play with this chance. */
const FLIP_RATE = 0.5;

function batches<T extends { reporter: number; due: number }>(items: T[], batchMs: number): { at: number; reporter: number; items: T[] }[] {
  const out: { at: number; reporter: number; items: T[] }[] = [];
  const byReporter = new Map<number, T[]>();
  for (const it of items) byReporter.set(it.reporter, [...(byReporter.get(it.reporter) ?? []), it]);
  for (const [reporter, list] of byReporter) {
    list.sort((a, b) => a.due - b.due);
    let cur: { at: number; reporter: number; items: T[] } | null = null;
    let first = 0;
    for (const it of list) {
      if (cur && it.due - first <= batchMs) {
        cur.items.push(it);
        cur.at = it.due;
      } else {
        cur = { at: it.due, reporter, items: [it] };
        first = it.due;
        out.push(cur);
      }
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** Every crowd report of one game, with its noise, grouped into the POSTs that carry them. */
export function planCrowd(replay: Replay, gc: GameClock, opts: CrowdOptions, timing: PlanTiming, random: Random): ReportSend[] {
  const { target } = replay;
  const dishonest = opts.attacks.includes('troll') ? opts.reporters - 1 : -1;
  const pending: { reporter: number; due: number; report: ReportInput; fake: boolean }[] = [];
  const refs = new Array<number>(opts.reporters).fill(0);
  const ref = (reporter: number) => `${target.gameId}.${reporter + 1}.${++refs[reporter]}`;
  const delay = () => Math.min(opts.delayCapMs, logNormal(random, opts.delayMedianMs, opts.delaySigma)) * timing.delayScale;
  const other = (team: string) => (team === target.home.code ? target.away.code : target.home.code);

  for (const play of replay.plays) {
    if (play.points <= 0) continue;
    for (let r = 0; r < opts.reporters; r++) {
      if (chance(random, opts.missRate)) continue;
      const seen = play.at + uniform(random, 0, opts.perceptionS);
      let team = play.team;
      let points = play.points;
      let eventType = play.eventType;
      if (chance(random, opts.wrongRate)) {
        if (target.sport === 'basketball' && chance(random, 0.5)) {
          points = [1, 2, 3].filter((p) => p !== play.points)[pickIndex(random, 2)];
          eventType = SHOT[points];
        } else team = other(team);
      }
      const report: ReportInput = { game_id: target.gameId, team, points, event_type: eventType, observed_at: isoTime(gc.world(seen)), ref: ref(r) };
      if (play.clock !== null) report.clock = play.clock;
      pending.push({ reporter: r, due: gc.real(seen) + delay(), report, fake: false });
    }
  }

  // The dishonest reporter also invents scores, at random moments away from real plays of the same value.
  if (dishonest >= 0) {
    const mean = opts.fakeEveryS[target.sport];
    for (let s = 60 + exponential(random, mean); s < replay.duration - 60; s += exponential(random, mean)) {
      const points = target.sport === 'soccer' ? 1 : 1 + pickIndex(random, 3);
      const team = chance(random, 0.5) ? target.home.code : target.away.code;
      if (replay.plays.some((p: ReplayPlay) => p.points === points && Math.abs(p.at - s) < FAKE_CLEARANCE_S)) continue;
      const report: ReportInput = {
        game_id: target.gameId,
        team,
        points,
        event_type: target.sport === 'soccer' ? 'goal' : SHOT[points],
        observed_at: isoTime(gc.world(s)),
        ref: ref(dishonest),
      };
      pending.push({ reporter: dishonest, due: gc.real(s) + delay(), report, fake: true });
    }
  }

  return batches(pending, timing.batchMs).map((b) => ({
    at: b.at,
    reporter: b.reporter,
    ...(b.reporter === dishonest && b.items.some((i) => i.fake) ? { attack: 'troll' as const } : {}),
    reports: b.items.map((i) => i.report),
    fake: b.items.map((i) => i.fake),
  }));
}

/**
 * The attackers' reports of one game (sim/README.md "Attackers"), beside the crowd's. They attack
 * once the crowd has reported the game's first play (before it, nobody would see them fail: three
 * distinct keys agreeing in an empty game are confirmed, as section 4 of the contract promises),
 * at random moments away from real plays worth the same:
 * - swarm: one key's own voice and 8 reporters it names post the same invented score at once;
 * - colluders: three keys post the same invented score within 2 s;
 * - sleepers: two keys report every real play as the crowd does, and from half-time on also post
 *   the same invented score together;
 * - flippers: two keys report half of the real plays for the other team (soccer) or with other
 *   points (basketball), as fast as the crowd.
 * The swarm, colluders and sleepers each make an attempt every ~30 game minutes in soccer, ~10 in
 * basketball.
 */
export function planAttacks(replay: Replay, gc: GameClock, opts: CrowdOptions, timing: PlanTiming, random: Random): ReportSend[] {
  const { target } = replay;
  const scoring = replay.plays.filter((p) => p.points > 0);
  const first = scoring[0];
  if (!first) return [];
  const out: ReportSend[] = [];
  const refs = new Map<string, number>();
  const ref = (who: string) => {
    const n = (refs.get(who) ?? 0) + 1;
    refs.set(who, n);
    return `${target.gameId}.${who}.${n}`;
  };
  const delay = () => Math.min(opts.delayCapMs, logNormal(random, opts.delayMedianMs, opts.delaySigma)) * timing.delayScale;
  const other = (team: string) => (team === target.home.code ? target.away.code : target.home.code);
  const send = (attack: SimAttack, attacker: string, s: number, reports: ReportInput[], fake: boolean, at = gc.real(s) + delay()) =>
    out.push({ at, reporter: -1, attacker, attack, reports, fake: reports.map(() => fake) });
  const invented = (s: number) => {
    const points = target.sport === 'soccer' ? 1 : 1 + pickIndex(random, 3);
    const team = chance(random, 0.5) ? target.home.code : target.away.code;
    if (replay.plays.some((p: ReplayPlay) => p.points === points && Math.abs(p.at - s) < FAKE_CLEARANCE_S)) return null;
    return { game_id: target.gameId, team, points, event_type: target.sport === 'soccer' ? 'goal' : SHOT[points], observed_at: isoTime(gc.world(s)) };
  };
  const mean = ATTEMPT_EVERY_S[target.sport];
  const moments = (from: number) => {
    const list: number[] = [];
    for (let s = from + exponential(random, mean); s < replay.duration - 60; s += exponential(random, mean)) list.push(s);
    return list;
  };
  const start = first.at + 60;
  for (const attack of opts.attacks) {
    if (attack === 'swarm') {
      for (const s of moments(start)) {
        const r = invented(s);
        if (!r) continue;
        const named = Array.from({ length: SWARM_SIZE }, (_, i) => ({ ...r, reporter: `sock-${i + 1}`, ref: ref('swarm') }));
        send('swarm', 'swarm', s, [...named, { ...r, ref: ref('swarm') }], true);
      }
    } else if (attack === 'colluders') {
      for (const s of moments(start)) {
        const r = invented(s);
        if (!r) continue;
        for (const k of ATTACKER_KEYS.colluders) send('colluders', k, s, [{ ...r, ref: ref(k) }], true, gc.real(s) + uniform(random, 0, 2000) * timing.delayScale);
      }
    } else if (attack === 'sleepers') {
      for (const p of scoring) {
        for (const k of ATTACKER_KEYS.sleepers) {
          const seen = p.at + uniform(random, 0, opts.perceptionS);
          const report: ReportInput = { game_id: target.gameId, team: p.team, points: p.points, event_type: p.eventType, observed_at: isoTime(gc.world(seen)), ref: ref(k) };
          if (p.clock !== null) report.clock = p.clock;
          send('sleepers', k, seen, [report], false);
        }
      }
      for (const s of moments(Math.max(start, replay.duration / 2))) {
        const r = invented(s);
        if (!r) continue;
        for (const k of ATTACKER_KEYS.sleepers) send('sleepers', k, s, [{ ...r, ref: ref(k) }], true, gc.real(s) + uniform(random, 0, 2000) * timing.delayScale);
      }
    } else if (attack === 'flippers') {
      for (const p of scoring.slice(1)) {
        if (!chance(random, FLIP_RATE)) continue;
        const flipBasket = target.sport === 'basketball' && chance(random, 0.5);
        const points = flipBasket ? [1, 2, 3].filter((x) => x !== p.points)[pickIndex(random, 2)] : p.points;
        const team = flipBasket ? p.team : other(p.team);
        // A flip that happens to be a real play of the moment (basketball scores often) is no flip.
        if (replay.plays.some((q: ReplayPlay) => q.team === team && q.points === points && Math.abs(q.at - p.at) < FAKE_CLEARANCE_S)) continue;
        for (const k of ATTACKER_KEYS.flippers) {
          const seen = p.at + uniform(random, 0, opts.perceptionS);
          send('flippers', k, seen, [{ game_id: target.gameId, team, points, event_type: target.sport === 'soccer' ? 'goal' : SHOT[points], observed_at: isoTime(gc.world(seen)), ref: ref(k) }], true);
        }
      }
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The official feed: kick-off / tip-off at once, then every play after its lag, in order, then `final`. */
export function planOfficial(replay: Replay, gc: GameClock, opts: OfficialOptions, timing: PlanTiming, random: Random): PlaySend[] {
  const { target } = replay;
  const source = `sim:${replay.sourceId}`.slice(0, 64);
  const opening = openingPlay(target, isoTime(gc.world(0)), source);
  const sends: PlaySend[] = [{ at: gc.startMs, plays: [opening] }];
  let prev = gc.startMs;
  let batchStart = -Infinity;
  for (const play of replay.plays) {
    // Plays are posted in order: a play never overtakes the one before it.
    const at = Math.max(prev, gc.real(play.at) + uniform(random, opts.lagMs[0], opts.lagMs[1]) * timing.delayScale);
    const input: PlayInput = {
      period: play.period,
      competitor_id: play.competitorId,
      event_type: play.eventType,
      points: play.points,
      ts: isoTime(gc.world(play.at)),
      source,
    };
    if (play.playerId !== null) input.player_id = play.playerId;
    if (play.clock !== null) input.clock = play.clock;
    const last = sends[sends.length - 1];
    if (sends.length > 1 && at - batchStart <= timing.batchMs) {
      last.plays.push(input);
      last.at = at;
    } else {
      sends.push({ at, plays: [input] });
      batchStart = at;
    }
    prev = at;
  }
  return sends;
}
