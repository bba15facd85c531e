import type { Config } from '../config.js';
import { isoDate, isoTime, systemClock, type Clock } from '../domain/clock.js';
import type { Db } from '../store/sql/db.js';
import { IngestClient } from './client.js';
import { abandonedReplays, claim, createTodayGame, release, scheduledToday } from './fixtures.js';
import { ensureSimKeys } from './keys.js';
import { attackerKeys, DEFAULT_CROWD, DEFAULT_OFFICIAL, DEFAULT_SPEED, GameClock, planAttacks, planCrowd, planOfficial, planTiming, type CrowdOptions } from './plan.js';
import type { SimAttack } from '../config.js';
import type { Random } from './random.js';
import { loadReplay, loadTarget, pickSource, sourcePool } from './replay.js';
import { GameRunner, type FakeReport, type RunnerState } from './runner.js';
import { startDisruptions } from './disruptions.js';
import type { SimSport } from './timeline.js';

export { seededRandom } from './random.js';
export type { FakeReport } from './runner.js';

export interface SimulatorOptions {
  /** The service's base URL: everything goes through its public ingestion API. */
  baseUrl: string;
  /** The service's database: to derive the keys and to pick games and their sources. */
  db: Db;
  config: Config;
  clock?: Clock;
  /** Game time runs this many times faster than real time (default 10: a match takes ~10 minutes). */
  speed?: number;
  log?: (line: string) => void;
  /** Seed it for a reproducible run (`seededRandom`). */
  random?: Random;
  /** Reporters in the crowd (default 6; with the troll attack the last of them is dishonest). */
  reporters?: number;
  /** The attackers the crowd takes (sim/README.md "Attackers"); default `config.simulatorAttacks` (SVC_SIMULATOR_ATTACKS). */
  attacks?: readonly SimAttack[];
  /** A new game starts this often while today's scheduled games remain (default 60 s). */
  intervalMs?: number;
  /** At most this many games run at once (default 4). */
  maxRunning?: number;
  /**
   * Postponements and suspensions now and then (sim/disruptions.ts); default on when
   * `config.simulatorDisruptions` is (SVC_SIMULATOR_DISRUPTIONS), with its default timing.
   */
  disruptions?: false | { everyMs?: number; firstMs?: number; holdMs?: number };
}

export interface SimGame {
  gameId: string;
  competitionId: string;
  sport: SimSport;
  /** The archived competition being replayed. */
  sourceId: string;
  home: string;
  away: string;
  state: RunnerState;
}

export interface Simulator {
  readonly speed: number;
  /** Every game this simulator started, with its state. */
  games(): SimGame[];
  /** The attackers' invented or flipped scores so far, with the event each one produced. */
  fakes(): FakeReport[];
  /** Timers set and requests in flight right now (all zero once stopped). */
  activity(): { running: number; timers: number; inflight: number };
  /** Cancels every timer and pending request; resolves when nothing is left running. */
  stop(): Promise<void>;
}

const SPORTS: SimSport[] = ['soccer', 'basketball'];
/** How long stop() lets requests in flight finish before aborting them. */
const STOP_GRACE_MS = 5_000;
/** What games() and fakes() keep of a long run. */
const MAX_GAMES_KEPT = 50;
const MAX_KEPT = 1_000;

/**
 * The live simulator (docs/architecture.md, `sim/README.md`): replays archived games as today's live games
 * through the real HTTP ingestion API, with a noisy crowd of reporters and a lagging official
 * feed. Starts one soccer and one basketball game at once, then another every `intervalMs`.
 */
export async function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const speed = opts.speed ?? DEFAULT_SPEED;
  if (!Number.isFinite(speed) || speed < 1 || speed > 100_000) throw new RangeError(`simulator speed must be between 1 and 100000, got ${speed}`);
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? Math.random;
  const log = opts.log ?? (() => {});
  const intervalMs = opts.intervalMs ?? 60_000;
  const maxRunning = opts.maxRunning ?? 4;
  const { db } = opts;
  const crowdOptions: CrowdOptions = { ...DEFAULT_CROWD, reporters: opts.reporters ?? DEFAULT_CROWD.reporters, attacks: opts.attacks ?? opts.config.simulatorAttacks };

  const keys = await ensureSimKeys(db, opts.config, crowdOptions.reporters, new Date(clock.now()), attackerKeys(crowdOptions.attacks));
  crowdOptions.reporters = keys.reporters.length;
  const pools: Record<SimSport, string[]> = { soccer: await sourcePool(db, 'soccer'), basketball: await sourcePool(db, 'basketball') };
  const client = new IngestClient(opts.baseUrl);
  const started: GameRunner[] = [];
  const running = new Set<GameRunner>();
  const fakes: FakeReport[] = [];
  let stopped = false;
  let intervalSet = false;
  let busy: Promise<void> = Promise.resolve();
  let turn = 0;

  const onEnd = (runner: GameRunner) => {
    running.delete(runner);
    const { plays, target } = runner.replay;
    if (runner.state === 'final') {
      const score = { home: 0, away: 0 };
      for (const p of plays) score[p.role] += p.points;
      log(`${target.gameId} final: ${target.home.code} ${score.home}–${score.away} ${target.away.code}`);
    }
    void release(db, target.competitionId).catch(() => undefined);
  };

  async function begin(competitionId: string, sport: SimSport): Promise<GameRunner | undefined> {
    const target = await loadTarget(db, competitionId);
    const sourceId = pickSource(pools[sport], competitionId);
    // The claim stays: a game that cannot be replayed is not worth retrying every minute.
    if (!target || !sourceId) {
      log(`${competitionId}: ${target ? `no archived ${sport} game to replay` : 'not a two-team game'}; skipped`);
      return undefined;
    }
    const replay = await loadReplay(db, target, sourceId);
    const gc = new GameClock(clock.now(), speed, replay.duration);
    const timing = planTiming(speed);
    const crowd = [...planCrowd(replay, gc, crowdOptions, timing, random), ...planAttacks(replay, gc, crowdOptions, timing, random)];
    const runner = new GameRunner(replay, crowd, planOfficial(replay, gc, DEFAULT_OFFICIAL, timing, random), {
      client,
      keys,
      clock,
      log,
      onFake: (f) => {
        fakes.push(f);
        if (fakes.length > MAX_KEPT) fakes.splice(0, fakes.length - MAX_KEPT);
      },
      onEnd,
    });
    started.push(runner);
    // A long-running simulator remembers its recent games only (each holds its whole plan).
    const ended = started.findIndex((r) => r.state !== 'running');
    if (started.length > MAX_GAMES_KEPT && ended >= 0) started.splice(ended, 1);
    running.add(runner);
    if (!(await runner.start())) return undefined;
    log(`${target.gameId} live: ${target.home.code} v ${target.away.code}, replaying ${sourceId} at ${speed}× (~${Math.round(replay.duration / speed / 6) / 10} min)`);
    return runner;
  }

  /** Starts the next scheduled game of `sport` today; with `create`, makes one when none is left. */
  async function launch(sport: SimSport, create: boolean): Promise<boolean> {
    if (!keys.official) return false;
    const today = isoDate(clock.now());
    let ids = await scheduledToday(db, sport, today);
    if (ids.length === 0 && create) {
      const id = await createTodayGame(db, sport, today, clock.now(), random);
      if (id) {
        log(`no scheduled ${sport} game left today: created ${id}`);
        ids = [id];
      }
    }
    for (const id of ids) {
      if (stopped) return false;
      if (!(await claim(db, id, clock.now()))) continue;
      if (await begin(id, sport)) return true;
    }
    return false;
  }

  /** Serialised: two launches at once could both see the same free slot. */
  const serially = (fn: () => Promise<void>): Promise<void> => {
    busy = busy.then(fn).catch((err: unknown) => log(`error: ${err instanceof Error ? err.message : String(err)}`));
    return busy;
  };

  /** Ends replays a previous run left half-way, so no game stays `live` forever. */
  async function closeAbandoned(): Promise<void> {
    const official = keys.official;
    if (!official) return;
    for (const game of await abandonedReplays(db, clock.now())) {
      const reply = await client.post(official.key, `/v1/competitions/${encodeURIComponent(game.competitionId)}/plays`, {
        period: { unit: 'fulltime', num: 1, label: 'Full time (replay stopped)' },
        competitor_id: game.home,
        event_type: 'final',
        points: 0,
        ts: isoTime(clock.now()),
        source: 'sim:stopped',
      });
      if (reply.status === 201) log(`${game.competitionId}: a previous run's replay stopped half-way; ended it`);
      await release(db, game.competitionId);
    }
  }

  if (!keys.official) log('the official feed key is revoked: the simulator stays idle');
  // Separate steps: one failing (say, a game that cannot be replayed) must not cancel the others.
  await serially(closeAbandoned);
  for (const sport of SPORTS) {
    await serially(async () => {
      await launch(sport, true);
    });
  }

  const disruptionTiming = opts.disruptions ?? (opts.config.simulatorDisruptions ? {} : false);
  const disruptions =
    disruptionTiming === false
      ? null
      : startDisruptions({
          client,
          db,
          clock,
          random,
          officialKey: () => keys.official?.key,
          playing: () => [...running].filter((r) => r.state === 'running').map((r) => r.replay.target.competitionId),
          log,
          ...disruptionTiming,
        });

  let idleDay = '';
  const timer = setInterval(() => {
    void serially(async () => {
      if (stopped || running.size >= maxRunning) return;
      const first = SPORTS[turn++ % SPORTS.length];
      if (await launch(first, false)) return;
      if (await launch(first === 'soccer' ? 'basketball' : 'soccer', false)) return;
      const today = isoDate(clock.now());
      if (running.size === 0 && idleDay !== today) {
        idleDay = today;
        log(`no scheduled soccer or basketball game left today (${today}); a restart creates fresh ones`);
      }
    });
  }, intervalMs);
  timer.unref();
  intervalSet = true;

  return {
    speed,
    games: () => started.map(describe),
    fakes: () => [...fakes],
    activity() {
      let timers = intervalSet ? 1 : 0;
      let inflight = 0;
      for (const r of started) {
        const a = r.activity();
        timers += a.timers;
        inflight += a.inflight;
      }
      return { running: running.size, timers, inflight };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      disruptions?.stop();
      intervalSet = false;
      await busy;
      const interrupted = [...running];
      // No new request goes out. Those in flight (ended games' late reports too) may finish:
      // aborting one the service has already received would not undo it, only hide its outcome.
      const halted = Promise.allSettled(started.map((r) => r.stop()));
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([halted, new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(grace);
      await client.close();
      await halted;
      running.clear();
      await Promise.allSettled(interrupted.map((r) => release(db, r.replay.target.competitionId)));
    },
  };
}

function describe(r: GameRunner): SimGame {
  const t = r.replay.target;
  return { gameId: t.gameId, competitionId: t.competitionId, sport: t.sport, sourceId: r.replay.sourceId, home: t.home.code, away: t.away.code, state: r.state };
}
