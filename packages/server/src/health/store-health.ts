import type { Clock } from '../domain/clock.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
/** How often a database known not to answer is asked again, and how long one ask may take. */
const RECHECK_MS = 1_000;
const PING_TIMEOUT_MS = 2_000;

/**
 * Whether the database is known not to answer: a call failed with `store_unavailable` and no ping
 * has been answered since. While it is, what can be answered without the database is (docs/
 * operations.md, "Failures and what svc does"): a read the response cache held, a key looked up
 * before. Each such answer would otherwise wait out the connection and query bounds (up to 15 s)
 * for a 503. One ping a second, from the first fault until one is answered.
 */
export class StoreHealth {
  private downSince: number | null = null;
  private checking = false;
  private closed = false;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly clock: Clock,
  ) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  /** A call failed for want of the database. */
  fault(): void {
    if (this.closed) return;
    this.downSince ??= this.clock.now();
    if (!this.checking) void this.recheck();
  }

  close(): void {
    this.closed = true;
  }

  private async recheck(): Promise<void> {
    this.checking = true;
    try {
      while (this.downSince !== null && !this.closed) {
        // Real time, not the clock's: this paces I/O, and a test's manual clock must not move for it.
        await sleep(RECHECK_MS);
        if (await this.answers()) this.downSince = null;
      }
    } finally {
      this.checking = false;
    }
  }

  private async answers(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)));
    const answered = this.ping().then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
