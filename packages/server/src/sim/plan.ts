import type { ReportInput } from '@svc/schema';
import type { PlayInput } from '@svc/schema';
import { isoTime } from '../domain/clock.js';
import { chance, exponential, logNormal, pickIndex, uniform, type Random } from './random.js';
import type { Replay, ReplayPlay } from './replay.js';
import { openingPlay } from './timeline.js';

/** The default speed: the real-time figures below (delays, lags) are meant at this speed. */
export const DEFAULT_SPEED = 10;

export interface CrowdOptions {
  /** Reporters in the crowd; the last one is the dishonest one. */
  reporters: number;
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
  reporter: number;
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
  const dishonest = opts.reporters - 1;
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
  if (opts.reporters > 0) {
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
    reports: b.items.map((i) => i.report),
    fake: b.items.map((i) => i.fake),
  }));
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
