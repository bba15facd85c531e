import type { Config } from '../config.js';
import { isoTime, type Clock } from '../domain/clock.js';
import { SvcError } from '../domain/errors.js';
import type { GameDirectory } from '../live/games.js';
import type { LiveIngest } from '../live/ingest.js';
import { PlaysMovedOn, type OfficialFeed } from '../live/official.js';
import { loadReplay, loadTarget } from '../sim/replay.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import type { ReplayRepo } from '../store/accounts/replays.js';
import type { ReplayTable } from '../store/accounts/types.js';
import { closeReplayGame } from './close.js';
import { replayCrowd } from './crowd.js';
import { onSourceClock, planSteps, ReplayClock, sourceOrigin, statusSteps, stepStart, type ReplayStep } from './plan.js';
import type { ScheduleFeed } from '../live/schedule.js';

export interface ReplayDriverDeps {
  db: Db;
  config: Config;
  clock: Clock;
  /** This node's name on the replays it drives. */
  nodeId: string;
  replays: ReplayRepo;
  competitions: CompetitionRepo;
  games: GameDirectory;
  ingest: LiveIngest;
  official: OfficialFeed;
  /** Status changes (docs/schedule.md): a replay carries its source's suspensions. */
  schedule: ScheduleFeed;
}

/** How long a driver's claim on a replay holds without renewal: a dead node's replays move on after it. */
export const REPLAY_CLAIM_MS = 5_000;
/** A step that fails (the database away, a handover) is tried again this many times before the replay is cancelled. */
const STEP_ATTEMPTS = 5;
/** Replays taken over per tick, at most. */
const TAKEOVER_BATCH = 20;

class Halted extends Error {}

/**
 * Drives sandbox replays (docs/replays.md): one node plays each replay, holding a claim on its
 * row that it renews every tick; a replay whose claim lapsed (its node died) or that no node
 * holds yet (its node stopped) is taken over by the next tick of any node, which picks up after
 * the last play stored. Plays go through the live pipeline in process: the crowd's reports
 * through the game's consensus owner (LiveIngest), the plays through the official feed.
 */
export class ReplayDriver {
  private readonly playing = new Map<string, { halt: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private stopped = false;
  private crowd: Promise<string[]> | null = null;
  private log: (line: string) => void = () => undefined;

  constructor(private readonly deps: ReplayDriverDeps) {}

  /** Replays this node is playing now. */
  get running(): number {
    return this.playing.size;
  }

  /** Renews this node's claims and takes over replays no node plays, every `tickMs`. */
  start(log: (line: string) => void, tickMs = 1000): void {
    if (this.timer || this.stopped) return;
    this.log = log;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = true;
      this.tick()
        .catch((err: unknown) => this.log(`replays: tick failed (${err instanceof Error ? err.message : String(err)})`))
        .finally(() => (this.ticking = false));
    }, tickMs);
    this.timer.unref();
  }

  async tick(): Promise<void> {
    const { replays, clock, nodeId } = this.deps;
    const now = clock.now();
    const held = await replays.renew([...this.playing.keys()], nodeId, isoTime(now + REPLAY_CLAIM_MS));
    // Cancelled through another node, or taken by another after a stall: stop playing it here.
    for (const [id, p] of this.playing) if (!held.has(id)) p.halt.abort();
    for (const r of await replays.unclaimed(isoTime(now), TAKEOVER_BATCH)) await this.drive(r.id);
  }

  /** Starts playing the replay on this node unless another node's claim holds it. */
  async drive(id: string): Promise<void> {
    if (this.stopped || this.playing.has(id)) return;
    const now = this.deps.clock.now();
    if (!(await this.deps.replays.claim(id, this.deps.nodeId, isoTime(now), isoTime(now + REPLAY_CLAIM_MS)))) return;
    if (this.stopped || this.playing.has(id)) return;
    const halt = new AbortController();
    const done = this.play(id, halt.signal)
      .catch(async (err: unknown) => {
        if (err instanceof Halted) return;
        // A step failed again and again: the replay ends, saying why, rather than stalling on every node in turn.
        const reason = `the replay failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
        this.log(`replay ${id}: ${reason}`);
        const row = await this.deps.replays.byId(id).catch(() => undefined);
        if (!(await this.deps.replays.end(id, 'cancelled', reason, isoTime(this.deps.clock.now())).catch(() => false)) || !row) return;
        await closeReplayGame(this.deps.games, this.deps.official, row.competition_id, 'replay failed').catch(() => undefined);
      })
      .finally(() => this.playing.delete(id));
    this.playing.set(id, { halt, done });
  }

  /** Stops playing one replay here (it was cancelled); resolves once its loop has let go. */
  async halt(id: string): Promise<void> {
    const p = this.playing.get(id);
    if (!p) return;
    p.halt.abort();
    await p.done;
  }

  /** Stops every replay of this node and gives their claims up, so another node (or this one restarted) resumes them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const ids = [...this.playing.keys()];
    for (const p of this.playing.values()) p.halt.abort();
    await Promise.allSettled([...this.playing.values()].map((p) => p.done));
    await this.deps.replays.release(ids, this.deps.nodeId).catch(() => undefined);
  }

  private crowdIds(): Promise<string[]> {
    this.crowd ??= replayCrowd(this.deps.db, this.deps.config, new Date(this.deps.clock.now())).catch((err: unknown) => {
      this.crowd = null;
      throw err;
    });
    return this.crowd;
  }

  private async play(id: string, halt: AbortSignal): Promise<void> {
    const { replays, competitions, clock } = this.deps;
    const row = await replays.byId(id);
    if (!row || (row.status !== 'scheduled' && row.status !== 'running')) return;
    const target = await loadTarget(this.deps.db, row.competition_id);
    if (!target) {
      await this.cancel(row, 'the replay’s game cannot be played (its teams are gone)');
      return;
    }
    const sourceGame = await competitions.get(row.source_competition_id);
    const loaded = await loadReplay(this.deps.db, target, row.source_competition_id);
    const source = onSourceClock(loaded, sourceGame?.start_time ?? null);
    const sourceEvents = (await competitions.confirmedEvents(row.source_game_id, { limit: 1000 }, ['status'])).data.flatMap((e) => (e.type === 'status' ? [e] : []));
    const statuses = statusSteps(sourceEvents, sourceOrigin(loaded, sourceGame?.start_time ?? null));
    const crowd = await this.crowdIds();
    // Where the replay is: the plays its game holds (the kick-off is the first); a step's reports are resent by ref.
    const stored = (await competitions.allPlays(row.competition_id)).length;
    const startedAtMs = row.started_at !== null ? Date.parse(row.started_at) : clock.now();
    const planned = new ReplayClock(startedAtMs, row.speed, source.duration);
    const steps = planSteps(source, row.id, planned);
    const pending = steps.filter((s) => s.seq > stored);
    const last = steps.filter((s) => s.seq <= stored).pop();
    // A resumed replay keeps the gap between the last play done and the next, from now.
    const resumeFrom = last ? last.at : pending.length ? stepStart(pending[0]) : 0;
    const timing = row.started_at === null ? planned : new ReplayClock(startedAtMs, row.speed, source.duration, clock.now() - (resumeFrom * 1000) / row.speed);
    // Stopped between its kick-off and recording it as running: it runs.
    if (stored > 0 && row.started_at === null) await replays.markRunning(row.id, isoTime(startedAtMs));
    // The source's suspensions still ahead (a resumed replay does not apply the ones behind it again).
    const statusesAhead = statuses.filter((s) => s.at > resumeFrom);
    const applyStatusesUntil = async (at: number) => {
      while (statusesAhead.length > 0 && statusesAhead[0].at <= at) {
        const s = statusesAhead[0];
        await this.until(timing.due(s.at), halt);
        // A move the game cannot make now (it is final) is skipped, not retried.
        await this.attempt(halt, () => this.deps.schedule.apply(row.competition_id, { status: s.status, ...(s.reason !== null ? { reason: s.reason } : {}) }).catch((err: unknown) => {
          if (err instanceof SvcError && err.code === 'invalid_transition') return false;
          throw err;
        }));
        statusesAhead.shift();
      }
    };
    for (const step of pending) {
      await applyStatusesUntil(step.at);
      // Cancelled meanwhile (its game closed, maybe on another node): no report goes to a final game.
      if (step.reports.length && (await this.gameOver(row))) break;
      for (const r of step.reports) {
        await this.until(timing.due(r.at), halt);
        const reporter = crowd[r.reporter];
        if (reporter !== undefined) await this.attempt(halt, () => this.deps.ingest.replayReports(reporter, target.gameId, [r.report]));
      }
      await this.until(timing.due(step.at), halt);
      if (!(await this.post(row, step, halt))) break;
      if (step.seq === 1 && row.started_at === null) await replays.markRunning(row.id, isoTime(startedAtMs));
      if (step.play.event_type === 'final') break;
    }
    // Its game is over (its final play is in, whoever posted it, even a driver that stopped right
    // after): so is the replay, unless it was cancelled, which ended it first.
    if (await this.gameOver(row)) await replays.end(row.id, 'finished', null, isoTime(clock.now()));
  }

  private async gameOver(row: ReplayTable): Promise<boolean> {
    return (await this.deps.games.byCompetitionId(row.competition_id))?.status === 'final';
  }

  /** Posts a step's play; false when the game was ended meanwhile (the replay was cancelled). */
  private async post(row: ReplayTable, step: ReplayStep, halt: AbortSignal): Promise<boolean> {
    return this.attempt(halt, async () => {
      const game = await this.deps.games.byCompetitionId(row.competition_id);
      if (!game || game.status === 'final') return false;
      try {
        await this.deps.official.record(game, [step.play], false, { afterSeq: step.seq - 1 });
        return true;
      } catch (err) {
        if (err instanceof SvcError && err.code === 'competition_final') return false;
        // Posted already (this driver before a restart, or another that held the replay for a moment): go on.
        if (err instanceof PlaysMovedOn) return true;
        throw err;
      }
    });
  }

  private async attempt<T>(halt: AbortSignal, fn: () => Promise<T>): Promise<T> {
    for (let i = 1; ; i++) {
      if (halt.aborted) throw new Halted();
      try {
        return await fn();
      } catch (err) {
        if (i >= STEP_ATTEMPTS) throw err;
        await this.until(this.deps.clock.now() + 250 * 2 ** i, halt);
      }
    }
  }

  private async cancel(row: ReplayTable, reason: string): Promise<void> {
    await this.deps.replays.end(row.id, 'cancelled', reason, isoTime(this.deps.clock.now()));
  }

  /** Waits until `dueMs` by the clock; throws Halted as soon as the replay is halted. */
  private async until(dueMs: number, halt: AbortSignal): Promise<void> {
    if (halt.aborted) throw new Halted();
    const wait = dueMs - this.deps.clock.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        halt.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      halt.addEventListener('abort', done, { once: true });
    });
    if (halt.aborted) throw new Halted();
  }
}
