import type { PlayInput, ReportInput } from '@svc/schema';
import { isoTime } from '../domain/clock.js';
import type { Replay } from '../sim/replay.js';
import { MIN_GAP_S, openingPlay } from '../sim/timeline.js';

/**
 * How a sandbox replay plays its source (docs/replays.md), planned up front and free of I/O.
 * Every scoring play reaches the consensus as crowd reports first (the first publishes a
 * provisional event, the third makes the quorum and the confirmation), then as the official
 * play, which the confirmed candidate absorbs; plays without points are official plays only.
 */

/** Reporters of a replay's crowd: the consensus quorum (docs/consensus.md), so every play confirms. */
export const CROWD_SIZE = 3;
/** Game seconds after a play at which each reporter reports it: a crowd is never quite together. */
const REPORT_AFTER_S = [0.5, 1, 1.5] as const;
/** Game seconds after a play at which the official feed posts it, after the crowd has confirmed it. */
const OFFICIAL_AFTER_S = 2;

export interface ReplayReport {
  /** Game seconds after kick-off / tip-off. */
  at: number;
  /** Index of the reporter in the replay's crowd. */
  reporter: number;
  report: ReportInput;
}

/** One play of the replay's game: its crowd reports, then itself as an official play. */
export interface ReplayStep {
  /** The play's `seq` in the replay's game: 1 for the kick-off, then the source's plays in order. */
  seq: number;
  reports: ReplayReport[];
  /** Game seconds at which the official play is posted. */
  at: number;
  play: PlayInput;
}

/**
 * Maps game seconds to the two clocks of a replay, as the simulator's GameClock does
 * (sim/README.md, "Two clocks"): `due` is when a step happens for real (the game runs `speed`
 * times faster, counted from `anchorMs`), `world` the time the replayed world lives in (game time
 * at its natural pace, ending at the replay's planned end), which reports' `observed_at` and
 * plays' `ts` carry, so the consensus windows see plays as far apart as in the real game.
 */
export class ReplayClock {
  private readonly worldStart: number;
  constructor(
    startedAtMs: number,
    readonly speed: number,
    duration: number,
    /** Real time of game second 0; a resumed replay moves it so the next play keeps its gap. */
    readonly anchorMs: number = startedAtMs,
  ) {
    this.worldStart = startedAtMs - duration * 1000 * (1 - 1 / speed);
  }
  due(s: number): number {
    return this.anchorMs + (s * 1000) / this.speed;
  }
  world(s: number): number {
    return this.worldStart + s * 1000;
  }
}

/**
 * The source's plays timed by the source's own clock: each play as long after the start as it
 * was in the source game (its `ts` against the game's start time, or, without one, against the
 * first play's place in game time), so the replay's gaps are the source's divided by the speed.
 * Consecutive plays stay at least MIN_GAP_S apart: two plays stamped alike (free throws) would
 * otherwise fall in one reporter's consensus duplicate window (sim/timeline.ts).
 */
/** The source game's second 0 on the world's clock: its start time, else its first play's place. */
export function sourceOrigin(replay: Replay, sourceStart: string | null): number {
  const first = replay.plays[0];
  const start = sourceStart === null ? Number.NaN : Date.parse(sourceStart);
  return !Number.isNaN(start) ? start : first ? Date.parse(first.ts) - first.at * 1000 : 0;
}

/** A status change of the source game during play (docs/schedule.md): a suspension, or the resumption after one. */
export interface ReplayStatusStep {
  /** Game seconds after the start, on the source's clock. */
  at: number;
  status: 'suspended' | 'live';
  reason: string | null;
}

/**
 * The source game's suspensions and resumptions, timed like its plays, so a replay carries them
 * (docs/replays.md). Changes before kick-off (a postponement) are not replayed: the replay's game
 * starts when it is created.
 */
export function statusSteps(events: readonly { status: string; previous_status: string; reason: string | null; ts: string }[], origin: number): ReplayStatusStep[] {
  const out: ReplayStatusStep[] = [];
  for (const e of events) {
    const at = (Date.parse(e.ts) - origin) / 1000;
    if (Number.isNaN(at) || at < 0) continue;
    if (e.status === 'suspended') out.push({ at, status: 'suspended', reason: e.reason });
    else if (e.status === 'live' && e.previous_status === 'suspended') out.push({ at, status: 'live', reason: e.reason });
  }
  return out.sort((a, b) => a.at - b.at);
}

export function onSourceClock(replay: Replay, sourceStart: string | null): Replay {
  const origin = sourceOrigin(replay, sourceStart);
  let prev = 0;
  const plays = replay.plays.map((p) => {
    const t = Date.parse(p.ts);
    const at = Math.max(Number.isNaN(t) || Number.isNaN(origin) ? p.at : (t - origin) / 1000, prev + MIN_GAP_S);
    prev = at;
    return { ...p, at };
  });
  return { ...replay, plays, duration: plays.length ? plays[plays.length - 1].at : 0 };
}

export function planSteps(replay: Replay, replayId: string, clock: Pick<ReplayClock, 'world'>): ReplayStep[] {
  const { target } = replay;
  const source = `replay:${replay.sourceId}`.slice(0, 64);
  const steps: ReplayStep[] = [
    {
      seq: 1,
      reports: [],
      at: 0,
      play: openingPlay(target, isoTime(clock.world(0)), source),
    },
  ];
  replay.plays.forEach((p, i) => {
    const seq = i + 2;
    const observed = isoTime(clock.world(p.at));
    const reports: ReplayReport[] =
      p.points > 0
        ? REPORT_AFTER_S.slice(0, CROWD_SIZE).map((after, reporter) => ({
            at: p.at + after,
            reporter,
            report: {
              game_id: target.gameId,
              team: p.team,
              points: p.points,
              event_type: p.eventType,
              observed_at: observed,
              // A resumed replay sends a play's reports again: the ref makes that a no-op.
              ref: `${replayId}.${seq}.${reporter + 1}`,
              ...(p.clock !== null ? { clock: p.clock } : {}),
            },
          }))
        : [];
    const play: PlayInput = { period: p.period, competitor_id: p.competitorId, event_type: p.eventType, points: p.points, ts: observed, source };
    if (p.playerId !== null) play.player_id = p.playerId;
    if (p.clock !== null) play.clock = p.clock;
    steps.push({ seq, reports, at: p.at + (p.points > 0 ? OFFICIAL_AFTER_S : 0), play });
  });
  return steps;
}

/** Game seconds of a step's play (its reports come first): where a resumed replay picks up. */
export const stepStart = (s: ReplayStep): number => (s.reports.length ? Math.min(s.at, ...s.reports.map((r) => r.at)) : s.at);
