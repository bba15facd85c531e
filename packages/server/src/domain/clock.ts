/** Every time-dependent rule reads time from a Clock so tests can move it. */
export interface Clock {
  now(): number;
  /**
   * Resolves once `ms` of this clock's time have passed. A wait for something that lapses on the
   * clock (a lease, a deadline) must wait on the same clock, or a test that moves time never sees
   * the lapse.
   */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

export class ManualClock implements Clock {
  constructor(private t = Date.parse('2026-06-11T12:00:00.000Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
  /** Moves the clock on by `ms` itself, then lets whatever else is due run first. */
  sleep(ms: number): Promise<void> {
    this.t += ms;
    return new Promise((resolve) => setImmediate(resolve));
  }
}

export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const isoTime = (ms: number): string => new Date(ms).toISOString();

/** The ISO date `days` days after `date` (before it when negative). */
export const addDays = (date: string, days: number): string => isoDate(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000);
