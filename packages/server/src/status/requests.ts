import type { Clock } from '../domain/clock.js';
import { MINUTE_MS } from '../domain/status.js';

const BUCKETS = 5;

/**
 * Answers and 5xx answers of this node's REST API over the last 5 minutes, in one-minute
 * buckets: two increments per request, no allocation.
 */
export class RequestTally {
  private readonly minute = new Array<number>(BUCKETS).fill(-1);
  private readonly total = new Array<number>(BUCKETS).fill(0);
  private readonly errors = new Array<number>(BUCKETS).fill(0);

  constructor(private readonly clock: Clock) {}

  record(statusCode: number): void {
    const m = Math.floor(this.clock.now() / MINUTE_MS);
    const i = m % BUCKETS;
    if (this.minute[i] !== m) {
      this.minute[i] = m;
      this.total[i] = 0;
      this.errors[i] = 0;
    }
    this.total[i] += 1;
    if (statusCode >= 500) this.errors[i] += 1;
  }

  /** Requests and 5xx answers of the current minute and the four before it. */
  window(): { requests: number; serverErrors: number } {
    const m = Math.floor(this.clock.now() / MINUTE_MS);
    let requests = 0;
    let serverErrors = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.minute[i] > m - BUCKETS && this.minute[i] <= m) {
        requests += this.total[i];
        serverErrors += this.errors[i];
      }
    }
    return { requests, serverErrors };
  }
}
