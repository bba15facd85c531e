import { sql, type Insertable } from 'kysely';
import { isoTime } from '../domain/clock.js';
import { randomBase62 } from '../domain/keys.js';
import { shouldAutoDisable } from '../domain/webhooks/schedule.js';
import type { Db } from '../store/db.js';
import type { WebhookAttemptTable } from '../store/webhook-types.js';
import { disableEndpoint } from './repo.js';
import type { Notification } from './records.js';

/** A delivery claimed for one attempt; `attempts` already counts it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  attempts: number;
  claim_token: string;
}

export interface ClaimRequest {
  now: number;
  leaseMs: number;
  limit: number;
  /** Per-endpoint ceiling of one claim, whatever is free. */
  cap: number;
  /** Free slots of an endpoint in this process. */
  free: (endpointId: string) => number;
  /** How many due rows one claim looks at, so a huge backlog costs a bounded scan. */
  scan: number;
}

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

/** The SQL side of the dispatcher: claiming due deliveries under a lease and writing outcomes. */
export class DeliveryQueue {
  constructor(private readonly db: Db) {}

  /**
   * Claims due deliveries, round-robin across endpoints (row_number per endpoint), within each
   * endpoint's free slots. The claim moves next_attempt_at to the end of the lease, so a worker
   * that dies mid-attempt releases its rows when the lease runs out. On PostgreSQL the rows are
   * locked with SKIP LOCKED and the due condition is re-checked on the locked row version, so two
   * workers never claim the same attempt; SQLite runs the whole UPDATE under its write lock.
   */
  async claim(req: ClaimRequest): Promise<ClaimedDelivery[]> {
    // Another worker may take the same candidates between our read and our update; its rows
    // then no longer qualify and the next read sees the ones behind them.
    for (let round = 0; round < 5; round++) {
      const ids = await this.candidates(req);
      if (ids.length === 0) return [];
      const claimed = await this.take(ids, req);
      if (claimed.length > 0) return claimed;
    }
    return [];
  }

  private async candidates(req: ClaimRequest): Promise<string[]> {
    const nowIso = isoTime(req.now);
    const rows = await sql<{ id: string; endpoint_id: string }>`
      select id, endpoint_id from (
        select id, endpoint_id, next_attempt_at,
               row_number() over (partition by endpoint_id order by next_attempt_at, id) as rn
        from (
          select id, endpoint_id, next_attempt_at from webhook_deliveries
          where status = 'pending' and next_attempt_at <= ${nowIso}
          order by next_attempt_at limit ${req.scan}
        ) due
      ) ranked
      where rn <= ${req.cap}
      order by rn, next_attempt_at, id`.execute(this.db.kysely);
    const taken = new Map<string, number>();
    const ids: string[] = [];
    for (const c of rows.rows) {
      if (ids.length >= req.limit) break;
      const n = taken.get(c.endpoint_id) ?? 0;
      if (n >= req.free(c.endpoint_id)) continue;
      taken.set(c.endpoint_id, n + 1);
      ids.push(c.id);
    }
    return ids;
  }

  private async take(ids: string[], req: ClaimRequest): Promise<ClaimedDelivery[]> {
    const nowIso = isoTime(req.now);
    const token = randomBase62(16);
    const rows = await this.db.kysely
      .updateTable('webhook_deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: isoTime(req.now + req.leaseMs), last_attempt_at: nowIso, claim_token: token }))
      .$if(this.db.engine === 'postgres', (q) =>
        q.where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('id', 'in', ids)
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', nowIso)
            .forUpdate()
            .skipLocked(),
        ),
      )
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', nowIso)
      .returning(['id', 'endpoint_id', 'event_id', 'event_seq', 'attempts'])
      .execute();
    return rows.map((r) => ({ ...r, claim_token: token }));
  }

  /**
   * Writes a batch of outcomes in one transaction: each delivery (only if this claim still holds
   * it), its attempt log row, the endpoints' success/failure window, and any disabling that
   * follows (410 at once; 24 h of failures per shouldAutoDisable). Returns the notifications made.
   */
  async record(outcomes: AttemptOutcome[], now: number, disableAfterMs: number): Promise<Notification[]> {
    const nowIso = isoTime(now);
    return this.db.kysely.transaction().execute(async (trx) => {
      const attempts: Insertable<WebhookAttemptTable>[] = [];
      const tallies = new Map<string, EndpointTally>();
      for (const o of outcomes) {
        const v = o.verdict;
        const base = trx.updateTable('webhook_deliveries').where('id', '=', o.job.id).where('claim_token', '=', o.job.claim_token);
        const common = { last_status_code: o.statusCode, last_error: o.error, claim_token: null };
        let q;
        switch (v.kind) {
          case 'cancel':
            q = base.set((eb) => ({ status: v.status, attempts: eb('attempts', '-', 1), next_attempt_at: null, last_error: v.reason, claim_token: null }));
            break;
          case 'delivered':
            q = base.set({ ...common, status: 'delivered', delivered_at: nowIso, next_attempt_at: null });
            break;
          case 'gone':
            q = base.set({ ...common, status: 'disabled', next_attempt_at: null });
            break;
          case 'retry':
            // An endpoint disabled while this attempt was in flight keeps the delivery parked.
            q = base.set({
              ...common,
              status: sql<string>`case when status = 'disabled' then 'disabled' else 'pending' end`,
              next_attempt_at: sql<string | null>`case when status = 'disabled' then null else ${isoTime(v.nextAttemptAt)} end`,
            });
            break;
          case 'failed':
            q = base.set({ ...common, status: sql<string>`case when status = 'disabled' then 'disabled' else 'failed' end`, next_attempt_at: null });
            break;
        }
        const res = await q.executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0 || v.kind === 'cancel') continue;
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
        if (v.kind === 'delivered') {
          t.lastSuccess = at;
          t.failingAfter = null;
        } else {
          t.failingAfter ??= at;
          t.failed = true;
          if (v.kind === 'gone') t.gone = true;
        }
        tallies.set(o.job.endpoint_id, t);
      }
      if (attempts.length) await trx.insertInto('webhook_attempts').values(attempts).execute();

      const notes: Notification[] = [];
      for (const [endpointId, t] of tallies) {
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
    });
  }
}
