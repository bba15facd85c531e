import { sql, type Insertable, type Kysely } from 'kysely';
import { isoTime } from '../domain/clock.js';
import { shouldAutoDisable } from '../domain/webhooks/schedule.js';
import type { Database } from '../store/types.js';
import type { WebhookAttemptTable } from '../store/webhook-types.js';
import type { ClaimedDelivery } from './queue.js';
import type { Notification } from '@svc/schema';
import { disableEndpoint } from './repo.js';

export type Verdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; nextAttemptAt: number }
  | { kind: 'failed' }
  | { kind: 'gone' }
  /** Not sent after all (endpoint disabled, owner revoked, event missing): the claim is undone. */
  | { kind: 'cancel'; status: 'disabled' | 'failed'; reason: string };

export interface AttemptOutcome {
  job: ClaimedDelivery;
  verdict: Verdict;
  /** Start of the attempt, epoch ms. */
  at: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

interface EndpointTally {
  lastSuccess: string | null;
  failingAfter: string | null;
  failed: boolean;
  gone: boolean;
}

/** How a verdict changes its delivery row. An endpoint disabled mid-attempt keeps the row parked. */
function change(o: AttemptOutcome, nowIso: string) {
  const v = o.verdict;
  const common = { last_status_code: o.statusCode, last_error: o.error, claim_token: null };
  switch (v.kind) {
    case 'cancel':
      return { status: v.status, attempts: sql<number>`attempts - 1`, next_attempt_at: null, last_error: v.reason, claim_token: null };
    case 'delivered':
      return { ...common, status: 'delivered', delivered_at: nowIso, next_attempt_at: null };
    case 'gone':
      return { ...common, status: 'disabled', next_attempt_at: null };
    case 'retry':
      return {
        ...common,
        status: sql<string>`case when status = 'disabled' then 'disabled' else 'pending' end`,
        next_attempt_at: sql<string | null>`case when status = 'disabled' then null else ${isoTime(v.nextAttemptAt)} end`,
      };
    case 'failed':
      return { ...common, status: sql<string>`case when status = 'disabled' then 'disabled' else 'failed' end`, next_attempt_at: null };
  }
}

/** Outcomes that change their rows the same way share one UPDATE (normally: every 2xx of a batch). */
function groupKey(o: AttemptOutcome): string {
  const v = o.verdict;
  return JSON.stringify([o.job.claim_token, v.kind, 'nextAttemptAt' in v ? v.nextAttemptAt : null, v.kind === 'cancel' ? [v.status, v.reason] : null, o.statusCode, o.error]);
}

/**
 * Remembers endpoints this process has just marked healthy, so a stream of 2xx does not rewrite
 * last_success_at on every batch. Any failure seen here clears the mark; a failure recorded by
 * another worker is cleared by our next write at most HEALTHY_REWRITE_MS later, which is nothing
 * against a 24 h rule.
 */
export class HealthMarks {
  private readonly marked = new Map<string, number>();
  fresh(endpointId: string, t: EndpointTally, now: number): boolean {
    if (t.failed) {
      this.marked.delete(endpointId);
      return false;
    }
    const at = this.marked.get(endpointId);
    return at !== undefined && now >= at && now - at < HEALTHY_REWRITE_MS;
  }
  mark(endpointId: string, now: number): void {
    if (this.marked.size > 10_000) this.marked.clear();
    this.marked.set(endpointId, now);
  }
}
const HEALTHY_REWRITE_MS = 1_000;

/**
 * Writes a batch of outcomes in one transaction: the deliveries (only rows this claim still
 * holds), their attempt log, the endpoints' success/failure window, and any disabling that
 * follows (410 at once; no 2xx for disableAfterMs per shouldAutoDisable). Returns the notifications made.
 */
export async function recordOutcomes(
  db: Kysely<Database>,
  outcomes: AttemptOutcome[],
  now: number,
  disableAfterMs: number,
  health: HealthMarks = new HealthMarks(),
): Promise<Notification[]> {
  const groups = new Map<string, AttemptOutcome[]>();
  for (const o of outcomes) {
    const k = groupKey(o);
    const list = groups.get(k);
    if (list) list.push(o);
    else groups.set(k, [o]);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOutcomes(db, groups, outcomes, now, disableAfterMs, health);
    } catch (err) {
      // PostgreSQL may pick this batch as a deadlock victim (a disable racing another worker's
      // batch); the whole transaction rolled back, so writing it again is safe.
      const code = err instanceof Error && 'code' in err ? String(err.code) : '';
      if (attempt >= 3 || (code !== '40P01' && code !== '40001')) throw err;
    }
  }
}

async function writeOutcomes(
  db: Kysely<Database>,
  groups: Map<string, AttemptOutcome[]>,
  outcomes: AttemptOutcome[],
  now: number,
  disableAfterMs: number,
  health: HealthMarks,
): Promise<Notification[]> {
  const nowIso = isoTime(now);
  return db.transaction().execute(async (trx) => {
    const held = new Set<string>();
    for (const group of groups.values()) {
      const first = group[0];
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set(change(first, nowIso))
        .where('claim_token', '=', first.job.claim_token)
        .where('id', 'in', group.map((o) => o.job.id))
        .returning('id')
        .execute();
      for (const r of updated) held.add(r.id);
    }
    const attempts: Insertable<WebhookAttemptTable>[] = [];
    const tallies = new Map<string, EndpointTally>();
    for (const o of outcomes) {
      if (!held.has(o.job.id) || o.verdict.kind === 'cancel') continue;
      const at = isoTime(o.at);
      attempts.push({
        delivery_id: o.job.id,
        attempt: o.job.attempts,
        endpoint_id: o.job.endpoint_id,
        at,
        status_code: o.statusCode,
        duration_ms: o.durationMs,
        error: o.error,
        response_excerpt: o.excerpt,
      });
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
    if (attempts.length) await trx.insertInto('webhook_attempts').values(attempts).execute();
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
    const ep = await trx
      .updateTable('webhook_endpoints')
      .set(
        t.lastSuccess !== null
          ? { last_success_at: t.lastSuccess, failing_since: t.failingAfter }
          : { failing_since: sql<string>`coalesce(failing_since, ${t.failingAfter})` },
      )
      .where('id', '=', endpointId)
      .returning(['last_success_at', 'failing_since', 'status'])
      .executeTakeFirst();
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
