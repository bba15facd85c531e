import { SPORTS } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import type { StoredEvent } from '../store/events.js';

export interface SportHealth {
  sport: string;
  status: 'operational' | 'idle' | 'degraded';
  live_games: number;
  events_last_5m: number;
  last_event_at: string | null;
  confirmation_p50_ms: number | null;
}

const WINDOW_MS = 5 * 60_000;

/**
 * Per-sport feed health from what this node's bus carried: recent event counts, the last event
 * and the median crowd-confirmation latency. A sport with live games but no event for 5 minutes
 * is `degraded`; one without live games is `idle`.
 */
export class FeedHealth {
  private recent = new Map<string, number[]>();
  private latencies = new Map<string, number[]>();
  private last = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  observe(events: StoredEvent[]): void {
    const now = this.clock.now();
    for (const { event } of events) {
      const times = this.recent.get(event.sport) ?? [];
      times.push(now);
      this.recent.set(event.sport, times);
      this.last.set(event.sport, now);
      if (event.tier === 'confirmed' && event.confidence.reporters > 0) {
        const l = this.latencies.get(event.sport) ?? [];
        l.push(event.confidence.latency_ms);
        if (l.length > 200) l.shift();
        this.latencies.set(event.sport, l);
      }
    }
  }

  report(liveGames: Map<string, number>): SportHealth[] {
    const now = this.clock.now();
    return SPORTS.map((sport) => {
      const times = (this.recent.get(sport) ?? []).filter((t) => now - t <= WINDOW_MS);
      this.recent.set(sport, times);
      const live = liveGames.get(sport) ?? 0;
      const last = this.last.get(sport);
      const lat = [...(this.latencies.get(sport) ?? [])].sort((a, b) => a - b);
      return {
        sport,
        status: live === 0 ? 'idle' : times.length > 0 ? 'operational' : 'degraded',
        live_games: live,
        events_last_5m: times.length,
        last_event_at: last === undefined ? null : new Date(last).toISOString(),
        confirmation_p50_ms: lat.length ? lat[Math.floor(lat.length / 2)] : null,
      };
    });
  }
}
