/**
 * Where a node is in its life: serving, or draining after SIGTERM (docs/operations.md). Readiness
 * reads it; the drain in serve.ts sets it before anything else so load balancers stop sending
 * traffic while in-flight work finishes.
 */
export class Lifecycle {
  private drainingSince: number | null = null;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  startDraining(now: number): void {
    this.drainingSince ??= now;
  }
}
