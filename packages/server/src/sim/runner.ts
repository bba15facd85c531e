import type { Clock } from '../domain/clock.js';
import { errorCode, reportResults, SimStoppedError, type IngestClient, type Reply } from './client.js';
import type { SimKeys } from './keys.js';
import type { PlaySend, ReportSend } from './plan.js';
import type { Replay } from './replay.js';

/** A score an attacker invented or flipped, and what the service made of it. */
export interface FakeReport {
  /** The attack it belongs to (sim/README.md "Attackers"). */
  attack: string;
  gameId: string;
  team: string;
  points: number;
  observedAt: string;
  /** The event the report joined (its provisional), when the service published one. */
  eventId: string | null;
  tier: string;
}

export type RunnerState = 'running' | 'final' | 'failed' | 'stopped';

export interface RunnerDeps {
  client: IngestClient;
  keys: SimKeys;
  clock: Clock;
  log: (line: string) => void;
  onFake: (f: FakeReport) => void;
  onEnd: (runner: GameRunner) => void;
}

type Action = { at: number; kind: 'reports'; send: ReportSend } | { at: number; kind: 'plays'; send: PlaySend };

const PLAY_RETRIES = 3;

const transient = (r: Reply): boolean => r.status >= 500 || r.status === 429;

/**
 * Plays one game out: every planned POST at its moment, crowd reports concurrently (each
 * reporter is its own app), official plays strictly one after another (their order is the
 * plays' `seq`). One timer at a time, for the next due action; ends after the `final` play.
 */
export class GameRunner {
  state: RunnerState = 'running';
  private readonly actions: Action[];
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private official: Promise<void> = Promise.resolve();
  private warned = false;

  constructor(
    readonly replay: Replay,
    crowd: ReportSend[],
    plays: PlaySend[],
    private readonly deps: RunnerDeps,
  ) {
    const actions: Action[] = [
      ...crowd.map((send): Action => ({ at: send.at, kind: 'reports', send })),
      ...plays.map((send): Action => ({ at: send.at, kind: 'plays', send })),
    ];
    // Stable: equal times keep plays in their planned order.
    this.actions = actions.sort((a, b) => a.at - b.at);
  }

  /** What is still pending: 1 if a timer is set, and the requests in flight. */
  activity(): { timers: number; inflight: number } {
    return { timers: this.timer ? 1 : 0, inflight: this.inflight.size };
  }

  get gameId(): string {
    return this.replay.target.gameId;
  }

  /** Posts the opening play at once (the game is live when this resolves), then runs the rest on time. */
  async start(): Promise<boolean> {
    const first = this.actions.findIndex((a) => a.kind === 'plays');
    if (first >= 0) {
      const [opening] = this.actions.splice(first, 1);
      let ok = false;
      try {
        ok = opening.kind === 'plays' && (await this.postPlays(opening.send));
      } catch (err) {
        if (!(err instanceof SimStoppedError)) this.deps.log(`${this.gameId}: could not start (${err instanceof Error ? err.message : String(err)})`);
      }
      if (!ok) {
        this.end('failed');
        return false;
      }
    }
    this.pump();
    return this.state === 'running';
  }

  /** Cancels what has not been sent and waits for what is in flight. */
  async stop(): Promise<void> {
    if (this.state === 'running') this.state = 'stopped';
    this.clearTimer();
    await Promise.allSettled([...this.inflight, this.official]);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private pump(): void {
    this.timer = null;
    if (this.state !== 'running') return;
    const now = this.deps.clock.now();
    while (this.next < this.actions.length && this.actions[this.next].at <= now) {
      const a = this.actions[this.next++];
      if (a.kind === 'reports') this.track(this.postReports(a.send));
      else {
        const send = a.send;
        this.official = this.official.then(async () => {
          if (this.state !== 'running') return;
          try {
            await this.postPlays(send);
          } catch (err) {
            // A play that cannot be posted breaks the sequence: the replay cannot go on.
            if (this.state === 'running') this.deps.log(`${this.gameId}: official play not posted (${err instanceof Error ? err.message : String(err)}); replay abandoned`);
            this.end('failed');
          }
        });
        this.track(this.official);
      }
    }
    if (this.next < this.actions.length) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, this.actions[this.next].at - this.deps.clock.now()));
      // The simulator never keeps a process alive on its own.
      this.timer.unref();
    }
  }

  private track(p: Promise<void>): void {
    const guarded = p.catch((err: unknown) => {
      if (!(err instanceof SimStoppedError) && this.state === 'running') this.warn(`${this.gameId}: ${err instanceof Error ? err.message : String(err)}`);
    });
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
  }

  private warn(line: string): void {
    // One warning per game is enough to show something is wrong without flooding the log.
    if (this.warned) return;
    this.warned = true;
    this.deps.log(line);
  }

  /** POSTs with retries on 5xx, 429 and network errors (every body here is safe to resend). */
  private async post(key: string, path: string, body: unknown, attempts: number): Promise<Reply> {
    for (let i = 1; ; i++) {
      let reply: Reply | undefined;
      let error: unknown;
      try {
        reply = await this.deps.client.post(key, path, body);
      } catch (err) {
        error = err;
      }
      if (reply && !transient(reply)) return reply;
      if (i >= attempts || this.state !== 'running') {
        if (reply) return reply;
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * i).unref());
    }
  }

  private async postReports(send: ReportSend): Promise<void> {
    const reporter = send.attacker !== undefined ? this.deps.keys.attackers.get(send.attacker) : this.deps.keys.reporters[send.reporter];
    if (!reporter) return;
    // One report goes as a bare object, several as a batch: both shapes of the API get used.
    const body = send.reports.length === 1 ? send.reports[0] : { reports: send.reports };
    // `ref` makes a resend safe, so a transient failure is retried once.
    const reply = await this.post(reporter.key, '/v1/reports', body, 2);
    if (reply.status === 202) {
      const results = reportResults(reply.body);
      send.reports.forEach((r, i) => {
        if (!send.fake[i]) return;
        this.deps.onFake({
          attack: send.attack ?? 'troll',
          gameId: r.game_id,
          team: r.team,
          points: r.points,
          observedAt: r.observed_at ?? '',
          eventId: results[i]?.event_id ?? null,
          tier: results[i]?.tier ?? 'provisional',
        });
      });
      return;
    }
    // Late reports for a game that has just ended are expected; anything else is worth a line.
    if (reply.status !== 409) this.warn(`${this.gameId}: POST /v1/reports answered ${reply.status} ${errorCode(reply.body) ?? ''}`.trim());
  }

  /** Returns false when the game cannot go on. */
  private async postPlays(send: PlaySend): Promise<boolean> {
    const official = this.deps.keys.official;
    if (!official) return false;
    const body = send.plays.length === 1 ? send.plays[0] : { plays: send.plays };
    const reply = await this.post(official.key, `/v1/competitions/${encodeURIComponent(this.replay.target.competitionId)}/plays`, body, PLAY_RETRIES);
    if (reply.status === 201) {
      if (send.plays.some((p) => p.event_type === 'final')) this.end('final');
      return true;
    }
    if (reply.status === 409) {
      // Someone else ended the game (an operator, another feed): nothing left to replay.
      this.deps.log(`${this.gameId}: ended elsewhere (${errorCode(reply.body) ?? 'conflict'}); replay stopped`);
      this.end('stopped');
      return false;
    }
    this.deps.log(`${this.gameId}: POST plays answered ${reply.status} ${errorCode(reply.body) ?? ''}; replay abandoned`.trim());
    this.end('failed');
    return false;
  }

  private end(state: RunnerState): void {
    if (this.state !== 'running') return;
    this.state = state;
    this.clearTimer();
    this.deps.onEnd(this);
  }
}
