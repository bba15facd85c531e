import type { Kysely } from 'kysely';
import type { Notification } from '@svc/schema';
import { isoTime } from '../../domain/clock.js';
import { shouldAutoDisable } from '../../domain/webhooks/schedule.js';
import type { Db } from '../sql/db.js';
import type { Database } from '../sql/database.js';
import { attemptLogRow, insertAttempts, outcomeRows, writeDeliveryOutcomes, type AttemptLogRow, type AttemptOutcome } from './deliveries.js';
import { disableEndpoint, updateEndpointHealth } from './endpoints.js';
import { writeTransaction } from '../sql/write-tx.js';

/**
 * A batch of attempt outcomes is one transaction over the four webhook tables, each written by its
 * owner: the delivery rows and the attempt log (deliveries.ts), then each endpoint's health
 * window and any disabling (endpoints.ts, which parks the deliveries and leaves the owner's
 * notification), so no outcome is kept without what it implies for its endpoint. This module holds
 * the order of those writes, none of their SQL.
 */

interface EndpointTally {
  lastSuccess: string | null;
  failingAfter: string | null;
  failed: boolean;
  gone: boolean;
}

/**
 * Remembers endpoints this process has just marked healthy, so a stream of 2xx does not rewrite
 * last_success_at on every batch. Any failure seen here clears the mark; a failure recorded by
 * another worker is cleared by our next write at most `rewriteMs` later (healthyRewriteMs).
 */
export class HealthMarks {
  private readonly marked = new Map<string, number>();
  private readonly rewriteMs: number;
  constructor(disableAfterMs: number) {
    this.rewriteMs = healthyRewriteMs(disableAfterMs);
  }
  fresh(endpointId: string, t: EndpointTally, now: number): boolean {
    if (t.failed) {
      this.marked.delete(endpointId);
      return false;
    }
    const at = this.marked.get(endpointId);
    return at !== undefined && now >= at && now - at < this.rewriteMs;
  }
  mark(endpointId: string, now: number): void {
    if (this.marked.size > 10_000) this.marked.clear();
    this.marked.set(endpointId, now);
  }
}

/**
 * How long a healthy endpoint's success may go unwritten by one worker: a hundredth of the
 * auto-disable window, at most a minute. The rows serve that rule alone (docs/webhooks.md
 * "Auto-disable"), so it decides at most 1 % late, while an endpoint busy on every node costs the
 * database one write a minute per worker instead of one a second (bench/RESULTS.md, "Healthy
 * endpoints written once a minute").
 */
function healthyRewriteMs(disableAfterMs: number): number {
  return Math.min(60_000, Math.floor(disableAfterMs / 100));
}

/**
 * Writes a batch of outcomes in one transaction: the deliveries (only rows this claim still
 * holds), their attempt log, the endpoints' success/failure window, and any disabling that
 * follows (410 at once; no 2xx for disableAfterMs per shouldAutoDisable). Returns the notifications made.
 */
export async function recordOutcomes(
  db: Db,
  outcomes: AttemptOutcome[],
  now: number,
  disableAfterMs: number,
  health: HealthMarks,
): Promise<Notification[]> {
  const rows = outcomeRows(outcomes);
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOutcomes(db, rows, outcomes, now, disableAfterMs, health);
    } catch (err) {
      // PostgreSQL may pick this batch as a deadlock victim (a disable racing another worker's
      // batch); the whole transaction rolled back, so writing it again is safe.
      const code = err instanceof Error && 'code' in err ? String(err.code) : '';
      if (attempt >= 3 || (code !== '40P01' && code !== '40001')) throw err;
    }
  }
}

async function writeOutcomes(
  db: Db,
  rows: string,
  outcomes: AttemptOutcome[],
  now: number,
  disableAfterMs: number,
  health: HealthMarks,
): Promise<Notification[]> {
  const nowIso = isoTime(now);
  return writeTransaction(db, async (tx) => {
    const trx = await tx.builder();
    const held = await writeDeliveryOutcomes(trx, db.engine, nowIso, rows);
    const attempts: AttemptLogRow[] = [];
    const tallies = new Map<string, EndpointTally>();
    for (const o of outcomes) {
      if (!held.has(o.job.id) || o.verdict.kind === 'cancel') continue;
      const at = isoTime(o.at);
      attempts.push(attemptLogRow(o, at));
      const t = tallies.get(o.job.endpoint_id) ?? { lastSuccess: null, failingAfter: null, failed: false, gone: false };
      if (o.verdict.kind === 'delivered') {
        t.lastSuccess = at;
        t.failingAfter = null;
      } else {
        t.failingAfter ??= at;
        t.failed = true;
        if (o.verdict.kind === 'gone') t.gone = true;
      }
      tallies.set(o.job.endpoint_id, t);
    }
    if (attempts.length) await insertAttempts(trx, db.engine, attempts);
    return settleEndpoints(trx, tallies, now, disableAfterMs, health);
  });
}

async function settleEndpoints(
  trx: Kysely<Database>,
  tallies: Map<string, EndpointTally>,
  now: number,
  disableAfterMs: number,
  health: HealthMarks,
): Promise<Notification[]> {
  const nowIso = isoTime(now);
  const notes: Notification[] = [];
  // One order for every worker: two batches touching the same endpoints cannot deadlock.
  for (const [endpointId, t] of [...tallies].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (health.fresh(endpointId, t, now)) continue;
    const ep = await updateEndpointHealth(trx, endpointId, t.lastSuccess, t.failingAfter);
    if (!ep || ep.status !== 'enabled') continue;
    if (!t.failed && ep.failing_since === null) health.mark(endpointId, now);
    let reason: 'gone' | 'failing' | null = t.gone ? 'gone' : null;
    if (!reason && t.failed) {
      const failing = shouldAutoDisable({
        lastSuccessAt: ep.last_success_at ? Date.parse(ep.last_success_at) : null,
        firstFailureSinceSuccessAt: ep.failing_since ? Date.parse(ep.failing_since) : null,
        now,
        disableAfterMs,
      });
      if (failing) reason = 'failing';
    }
    if (reason) {
      const note = await disableEndpoint(trx, endpointId, reason, nowIso, Math.round(disableAfterMs / 1000));
      if (note) notes.push(note);
    }
  }
  return notes;
}
