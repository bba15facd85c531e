import { CompetitionRepo } from '../store/reference/competitions.js';
import { attemptTally } from '../store/webhooks/deliveries.js';
import type { Redis } from 'ioredis';
import { isoDate, isoTime, type Clock } from '../domain/clock.js';
import type { Db } from '../store/sql/db.js';
import type { FeedHealth, SportHealth } from './feed-health.js';
import { StatusHistory, type IncidentRow } from '../store/status/history.js';
import { RequestTally } from './requests.js';
import {
  DAY_MS,
  HISTORY_DAYS,
  WEBHOOK_WINDOW_MS,
  dayUptime,
  feedIsUp,
  historyDays,
  minuteOf,
  periodUptime,
  restDegraded,
  webhooksFailing,
} from '../domain/status.js';

export const CHANNELS = ['rest', 'stream', 'webhooks'] as const;
export type Channel = (typeof CHANNELS)[number];
export type ChannelStatus = 'operational' | 'degraded';

export interface SportStatus extends SportHealth {
  uptime_90d: number | null;
  days: { date: string; uptime: number | null }[];
}

export interface Incident {
  id: string;
  sport?: string;
  channel?: string;
  title: string;
  started_at: string;
  resolved_at: string | null;
}

export interface StatusReport {
  status: 'operational' | 'degraded';
  generated_at: string;
  uptime_target: string;
  sports: SportStatus[];
  channels: { channel: Channel; status: ChannelStatus }[];
  incidents: Incident[];
}

const SPORT_LABEL: Record<string, string> = { soccer: 'Soccer', basketball: 'Basketball', tennis: 'Tennis', golf: 'Golf', mma: 'MMA' };
const INCIDENTS_SHOWN = 50;
/** How long a built report is shown to the public routes, at most (see `report`). */
export const REPORT_TTL_MS = 1000;
/** Samples are deleted past their retention once an hour, not every minute. */
const PRUNE_EVERY_MS = 60 * 60_000;

const round6 = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e6) / 1e6);

function incidentRecord(r: IncidentRow): Incident {
  return {
    id: r.id,
    ...(r.sport !== null ? { sport: r.sport } : {}),
    ...(r.channel !== null ? { channel: r.channel } : {}),
    title: r.title,
    started_at: r.started_at,
    resolved_at: r.resolved_at,
  };
}

/**
 * The service's own health: the current state (feeds, channels), the minute samples behind the
 * 90-day history and the incidents opened and resolved from them. Rules in domain/status.ts,
 * explained in docs/status-page.md.
 */
export class StatusService {
  readonly history: StatusHistory;
  /** Fed by every HTTP answer of this node (app.ts). */
  readonly requests: RequestTally;
  private lastSampled = -1;
  private lastPruned = -1;
  private held: { at: number; generation: number; report: Promise<StatusReport> } | null = null;
  private generation = 0;
  private readonly competitions: CompetitionRepo;

  constructor(
    private readonly deps: { db: Db; clock: Clock; health: FeedHealth; redis: Redis | null },
  ) {
    this.history = new StatusHistory(deps.db);
    this.competitions = new CompetitionRepo(deps.db);
    this.requests = new RequestTally(deps.clock);
  }

  liveGames(): Promise<Map<string, number>> {
    return this.competitions.liveCountBySport();
  }

  private async channels(now: number): Promise<{ list: StatusReport['channels']; webhooksFailing: boolean }> {
    const redisDown = this.deps.redis !== null && this.deps.redis.status !== 'ready';
    const rest = this.requests.window();
    const hooks = await attemptTally(this.deps.db, now - WEBHOOK_WINDOW_MS);
    const failing = webhooksFailing(hooks.attempts, hooks.failures);
    const state = (degraded: boolean): ChannelStatus => (degraded ? 'degraded' : 'operational');
    return {
      list: [
        { channel: 'rest', status: state(redisDown || restDegraded(rest.requests, rest.serverErrors)) },
        { channel: 'stream', status: state(redisDown) },
        { channel: 'webhooks', status: state(failing) },
      ],
      webhooksFailing: failing,
    };
  }

  /**
   * Records the current minute (once per minute, whichever node gets there first) and opens or
   * resolves incidents. Returns false when this minute was already sampled by this process.
   */
  async sample(): Promise<boolean> {
    const now = this.deps.clock.now();
    const minute = minuteOf(now);
    if (minute === this.lastSampled) return false;
    const feeds = this.deps.health.evaluate(await this.liveGames());
    await this.history.record(
      minute,
      feeds.map((f) => ({ sport: f.health.sport, up: feedIsUp(f.health.status), liveGames: f.health.live_games, events5m: f.health.events_last_5m })),
    );
    for (const f of feeds) {
      const subject = `sport:${f.health.sport}`;
      if (f.degradedSince !== null) {
        const label = SPORT_LABEL[f.health.sport] ?? f.health.sport;
        await this.history.open({ subject, sport: f.health.sport, channel: null, title: `${label}: no events for 5 minutes during live games`, startedAt: f.degradedSince });
      } else {
        await this.history.resolve(subject, now);
      }
    }
    const channels = await this.channels(now);
    if (channels.webhooksFailing) {
      await this.history.open({ subject: 'channel:webhooks', sport: null, channel: 'webhooks', title: 'Webhooks: more than 50 % of delivery attempts failing', startedAt: now });
    } else {
      await this.history.resolve('channel:webhooks', now);
    }
    if (this.lastPruned < 0 || now - this.lastPruned >= PRUNE_EVERY_MS) {
      await this.history.prune(now);
      this.lastPruned = now;
    }
    this.lastSampled = minute;
    this.generation++;
    return true;
  }

  /**
   * The current report. The routes that show it are public, so anyone can ask as often as they
   * like: a report is built at most once a second (REPORT_TTL_MS) and concurrent askers share the
   * one being built. An event seen by this node (its own or, in a cluster, from the bus) makes the
   * next ask build a new one, so a feed's change shows at once; the rest (webhook tallies, REST
   * answers, history) may be a second old.
   */
  report(): Promise<StatusReport> {
    const now = this.deps.clock.now();
    const held = this.held;
    if (held && held.generation === this.generation && now - held.at < REPORT_TTL_MS) return held.report;
    const report = this.build(now);
    const entry = { at: now, generation: this.generation, report };
    this.held = entry;
    // A failed build is not kept: the next ask tries again.
    report.catch(() => {
      if (this.held === entry) this.held = null;
    });
    return report;
  }

  /** Called for every batch of events this node sees: the next report is built afresh (as after a sample). */
  eventsSeen(): void {
    this.generation++;
  }

  private async build(now: number): Promise<StatusReport> {
    const feeds = this.deps.health.evaluate(await this.liveGames());
    const channels = await this.channels(now);
    const days = historyDays(now);
    const tallies = await this.history.days(days[0], days[days.length - 1]);
    const start = (await this.history.monitoringStart()) ?? now;
    const sports = feeds.map(({ health }): SportStatus => {
      const figures = days.map((d) => dayUptime(tallies.get(health.sport)?.get(d), d, start, now));
      return {
        ...health,
        uptime_90d: round6(periodUptime(figures)),
        days: days.map((d, i) => ({ date: isoDate(d), uptime: round6(figures[i].uptime) })),
      };
    });
    const incidents = (await this.history.incidents(now - HISTORY_DAYS * DAY_MS, INCIDENTS_SHOWN)).map(incidentRecord);
    const degraded = sports.some((s) => s.status === 'degraded') || channels.list.some((c) => c.status === 'degraded');
    return {
      status: degraded ? 'degraded' : 'operational',
      generated_at: isoTime(now),
      uptime_target: '99.9%',
      sports,
      channels: channels.list,
      incidents,
    };
  }
}
