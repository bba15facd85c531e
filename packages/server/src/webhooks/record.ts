import { CompiledQuery, sql, type Kysely } from 'kysely';
import { isoTime } from '../domain/clock.js';
import { shouldAutoDisable } from '../domain/webhooks/schedule.js';
import type { Database } from '../store/types.js';
import type { Db } from '../store/db.js';
import type { ClaimedDelivery } from './queue.js';
import type { Notification } from '@svc/schema';
import { writeTransaction } from '../store/write-tx.js';
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

/**
 * One outcome as the outcome update reads it, positionally: [id, claim token, verdict kind,
 * cancel status, next attempt (ISO), status code, error]. A batch travels as one JSON parameter,
 * so the statement's text never changes and is prepared once (docs/architecture.md "Hot reads":
 * building a query per id cost as much as SQLite's own work).
 */
type OutcomeRow = [string, string, Verdict['kind'], string | null, string | null, number | null, string | null];

function outcomeRow(o: AttemptOutcome): OutcomeRow {
  const v = o.verdict;
  // A cancelled attempt keeps the row's last status code and records why it was not sent.
  if (v.kind === 'cancel') return [o.job.id, o.job.claim_token, v.kind, v.status, null, null, v.reason];
  return [o.job.id, o.job.claim_token, v.kind, null, v.kind === 'retry' ? isoTime(v.nextAttemptAt) : null, o.statusCode, o.error];
}

/** An attempt log row, positionally: the columns of webhook_attempts in INSERT_ATTEMPTS' order. */
type AttemptRow = [string, number, string, string, number | null, number, string | null, string | null];

/**
 * How a verdict changes its delivery row (docs/webhooks.md "Delivery", "Auto-disable"): 2xx →
 * delivered; 410 → the endpoint is disabled, so the row too; a retry is pending again at its next
 * attempt and a final failure is failed, unless the endpoint was disabled mid-attempt, which keeps
 * the row parked as disabled; a cancel undoes the claim's count. Only the claim that still holds
 * the row writes it (`claim_token`); the ids it wrote come back.
 */
const SET_OUTCOME = `
  status = case o.kind
    when 'cancel' then o.cancel_status
    when 'delivered' then 'delivered'
    when 'gone' then 'disabled'
    else case when webhook_deliveries.status = 'disabled' then 'disabled' when o.kind = 'retry' then 'pending' else 'failed' end
  end,
  attempts = case when o.kind = 'cancel' then webhook_deliveries.attempts - 1 else webhook_deliveries.attempts end,
  next_attempt_at = case when o.kind = 'retry' and webhook_deliveries.status <> 'disabled' then o.next_at end,
  last_status_code = case when o.kind = 'cancel' then webhook_deliveries.last_status_code else o.status_code end,
  last_error = o.error,
  delivered_at = case when o.kind = 'delivered' then o.now else webhook_deliveries.delivered_at end,
  claim_token = null`;

const UPDATE_OUTCOMES = {
  sqlite: `
    update webhook_deliveries set ${SET_OUTCOME}
    from (
      select value ->> 0 as id, value ->> 1 as token, value ->> 2 as kind, value ->> 3 as cancel_status,
        value ->> 4 as next_at, value ->> 5 as status_code, value ->> 6 as error, ? as now
      from json_each(?)
    ) as o
    where webhook_deliveries.id = o.id and webhook_deliveries.claim_token = o.token
    returning webhook_deliveries.id`,
  postgres: `
    update webhook_deliveries set ${SET_OUTCOME}
    from (
      select e ->> 0 as id, e ->> 1 as token, e ->> 2 as kind, e ->> 3 as cancel_status,
        e ->> 4 as next_at, (e ->> 5)::int as status_code, e ->> 6 as error, $1::text as now
      from jsonb_array_elements($2::jsonb) as e
    ) as o
    where webhook_deliveries.id = o.id and webhook_deliveries.claim_token = o.token
    returning webhook_deliveries.id`,
};

const INSERT_ATTEMPTS = {
  sqlite: `
    insert into webhook_attempts (delivery_id, attempt, endpoint_id, at, status_code, duration_ms, error, response_excerpt)
    select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7
    from json_each(?)`,
  postgres: `
    insert into webhook_attempts (delivery_id, attempt, endpoint_id, at, status_code, duration_ms, error, response_excerpt)
    select e ->> 0, (e ->> 1)::int, e ->> 2, e ->> 3, (e ->> 4)::int, (e ->> 5)::int, e ->> 6, e ->> 7
    from jsonb_array_elements($1::jsonb) as e`,
};

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
  db: Db,
  outcomes: AttemptOutcome[],
  now: number,
  disableAfterMs: number,
  health: HealthMarks = new HealthMarks(),
): Promise<Notification[]> {
  const rows = JSON.stringify(outcomes.map(outcomeRow));
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
  return writeTransaction(db, async ({ kysely: trx }) => {
    const updated = await trx.executeQuery<{ id: string }>(CompiledQuery.raw(UPDATE_OUTCOMES[db.engine], [nowIso, rows]));
    const held = new Set(updated.rows.map((r) => r.id));
    const attempts: AttemptRow[] = [];
    const tallies = new Map<string, EndpointTally>();
    for (const o of outcomes) {
      if (!held.has(o.job.id) || o.verdict.kind === 'cancel') continue;
      const at = isoTime(o.at);
      attempts.push([o.job.id, o.job.attempts, o.job.endpoint_id, at, o.statusCode, o.durationMs, o.error, o.excerpt]);
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
    if (attempts.length) await trx.executeQuery(CompiledQuery.raw(INSERT_ATTEMPTS[db.engine], [JSON.stringify(attempts)]));
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
