/**
 * The status page's rules, as plain functions of their inputs (no clock, no I/O). What they
 * mean for users: docs/status-page.md.
 */

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** A live sport is down after this long without an event. */
export const FEED_SILENCE_MS = 5 * MINUTE_MS;
/** The webhook failure rate is measured over this window... */
export const WEBHOOK_WINDOW_MS = 5 * MINUTE_MS;
/** ...once it holds at least this many attempts (two failures of one receiver are not an incident)... */
export const WEBHOOK_MIN_ATTEMPTS = 10;
/** ...and is an incident above this share of failed attempts. */
export const WEBHOOK_FAILURE_THRESHOLD = 0.5;
/** REST is degraded when more than this share of answers are 5xx... */
export const REST_ERROR_THRESHOLD = 0.05;
/** ...among at least this many requests in the window. */
export const REST_MIN_REQUESTS = 20;
/** Days of history on the page and in `uptime_90d`. */
export const HISTORY_DAYS = 90;

export type FeedStatus = 'operational' | 'idle' | 'degraded';

export interface FeedInput {
  liveGames: number;
  /** Last event of the sport seen by this node, epoch ms. */
  lastEventAt: number | null;
  /** Since when the sport has had live games without a break, epoch ms (null when none are live). */
  liveSince: number | null;
  now: number;
}

/**
 * A sport without live games has nothing to deliver: `idle`, which counts as up. With live
 * games it is `operational` while an event arrived within FEED_SILENCE_MS, counted from the
 * later of its last event and the moment its games went live; past that it is `degraded` (down)
 * and `degradedSince` says when the silence crossed the limit.
 */
export function feedState(i: FeedInput): { status: FeedStatus; degradedSince: number | null } {
  if (i.liveGames === 0) return { status: 'idle', degradedSince: null };
  const from = Math.max(i.lastEventAt ?? Number.NEGATIVE_INFINITY, i.liveSince ?? i.now);
  const silentUntil = from + FEED_SILENCE_MS;
  return i.now >= silentUntil ? { status: 'degraded', degradedSince: silentUntil } : { status: 'operational', degradedSince: null };
}

export const feedIsUp = (s: FeedStatus): boolean => s !== 'degraded';

/** Webhooks are failing when more than half of at least WEBHOOK_MIN_ATTEMPTS recent attempts got no 2xx. */
export function webhooksFailing(attempts: number, failures: number): boolean {
  return attempts >= WEBHOOK_MIN_ATTEMPTS && failures / attempts > WEBHOOK_FAILURE_THRESHOLD;
}

export function restDegraded(requests: number, serverErrors: number): boolean {
  return requests >= REST_MIN_REQUESTS && serverErrors / requests > REST_ERROR_THRESHOLD;
}

export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

export interface DayTally {
  /** Start of the UTC day, epoch ms. */
  day: number;
  sampled: number;
  up: number;
  lastMinute: number;
}

export interface DayUptime {
  /** Minutes the day should have been sampled: its covered span, gaps included. */
  expected: number;
  up: number;
  /** up / expected, or null for a day without samples. */
  uptime: number | null;
}

/**
 * A day's uptime from its samples. Minutes are counted from the start of monitoring (the first
 * sample ever) or the day's start, to the day's end or now; a minute without a sample counts as
 * down, so a stopped service shows as downtime rather than vanishing from the figure. The current
 * minute counts once it is sampled. A day without any sample has no figure (null).
 */
export function dayUptime(t: DayTally | undefined, day: number, monitoringStart: number, now: number): DayUptime {
  if (!t || t.sampled === 0) return { expected: 0, up: 0, uptime: null };
  const start = Math.max(day, minuteOf(monitoringStart));
  const currentMinute = minuteOf(now);
  const end = Math.min(day + DAY_MS, currentMinute + (t.lastMinute >= currentMinute ? MINUTE_MS : 0));
  const expected = Math.max(t.sampled, Math.round((end - start) / MINUTE_MS));
  return { expected, up: t.up, uptime: t.up / expected };
}

/** The last HISTORY_DAYS UTC days ending with today's, oldest first, as epoch ms of their starts. */
export function historyDays(now: number, days = HISTORY_DAYS): number[] {
  const today = dayOf(now);
  return Array.from({ length: days }, (_, i) => today - (days - 1 - i) * DAY_MS);
}

/** The 90-day figure: up minutes over expected minutes of every day with samples; null without any. */
export function periodUptime(days: DayUptime[]): number | null {
  let expected = 0;
  let up = 0;
  for (const d of days) {
    expected += d.expected;
    up += d.up;
  }
  return expected === 0 ? null : up / expected;
}
