import { SPORTS } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import type { StoredEvent } from '../store/events/events.js';
import { FEED_SILENCE_MS, feedState, type FeedStatus } from '../domain/status.js';

export interface SportHealth {
  sport: string;
  status: FeedStatus;
  live_games: number;
  events_last_5m: number;
  last_event_at: string | null;
  confirmation_p50_ms: number | null;
}

export interface SportFeed {
  health: SportHealth;
  /** When the sport's silence crossed the limit, epoch ms; null unless degraded. */
  degradedSince: number | null;
}

/**
 * Per-sport feed health from what this node's bus carried: recent event counts, the last event
 * and the median crowd-confirmation latency. The up/down rule is `feedState` (domain/status.ts):
 * a sport whose games have been live for 5 minutes without an event is `degraded`; one without
 * live games is `idle`.
 */
export class FeedHealth {
  private recent = new Map<string, number[]>();
  private latencies = new Map<string, number[]>();
  private last = new Map<string, number>();
  private liveSince = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  observe(events: StoredEvent[]): void {
    const now = this.clock.now();
    for (const { event, ownerKeyId } of events) {
      // A sandbox replay's events say nothing about the live feeds (docs/replays.md).
      if (ownerKeyId) continue;
      const times = this.recent.get(event.sport) ?? [];
      times.push(now);
      this.recent.set(event.sport, times);
      this.last.set(event.sport, now);
      if (event.type !== 'status' && event.tier === 'confirmed' && event.confidence.reporters > 0) {
        const l = this.latencies.get(event.sport) ?? [];
        l.push(event.confidence.latency_ms);
        if (l.length > 200) l.shift();
        this.latencies.set(event.sport, l);
      }
    }
  }

  /**
   * Health of every sport given its live game counts. A sport is seen going live at the first
   * evaluation that finds live games (the sampler evaluates every few seconds), so a game that
   * has just started gets its 5 minutes before its silence counts.
   */
  evaluate(liveGames: Map<string, number>): SportFeed[] {
    const now = this.clock.now();
    return SPORTS.map((sport) => {
      const times = (this.recent.get(sport) ?? []).filter((t) => now - t <= FEED_SILENCE_MS);
      this.recent.set(sport, times);
      const live = liveGames.get(sport) ?? 0;
      if (live === 0) this.liveSince.delete(sport);
      else if (!this.liveSince.has(sport)) this.liveSince.set(sport, now);
      const last = this.last.get(sport);
      const lat = [...(this.latencies.get(sport) ?? [])].sort((a, b) => a - b);
      const state = feedState({ liveGames: live, lastEventAt: last ?? null, liveSince: this.liveSince.get(sport) ?? null, now });
      return {
        health: {
          sport,
          status: state.status,
          live_games: live,
          events_last_5m: times.length,
          last_event_at: last === undefined ? null : new Date(last).toISOString(),
          confirmation_p50_ms: lat.length ? lat[Math.floor(lat.length / 2)] : null,
        },
        degradedSince: state.degradedSince,
      };
    });
  }
}
