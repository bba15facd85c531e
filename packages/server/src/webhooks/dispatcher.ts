import type { Config } from '../config.js';
import { isoTime, type Clock } from '../domain/clock.js';
import { deliveryDecision } from '../domain/webhooks/schedule.js';
import { signPayload } from '../domain/webhooks/signature.js';
import type { Lookup } from './target-resolver.js';
import type { Db } from '../store/sql/db.js';
import { DeliveryQueue, type AttemptOutcome, type ClaimedDelivery, type Verdict } from '../store/webhooks/deliveries.js';
import { WebhookEndpointStore } from '../store/webhooks/endpoints.js';
import { HealthMarks, recordOutcomes } from '../store/webhooks/outcomes.js';
import { secretBoxOf } from '../secrets/key.js';
import { DeliveryDirectory, signingSecrets, type Body, type EndpointInfo } from './directory.js';
import type { Notification } from '@svc/schema';
import { WebhookSender } from './sender.js';

export const USER_AGENT = 'svc-webhooks/1.0';

export interface DispatcherOptions {
  /** In-flight attempts per endpoint in this process: one slow receiver holds at most this many slots. */
  perEndpointConcurrency?: number;
  /** In-flight attempts in this process. */
  maxInFlight?: number;
  /** Deliveries claimed per query. */
  claimBatch?: number;
  /** Due rows one claim looks at, as a multiple of the rows it wants (default 4). */
  claimScan?: number;
  /**
   * Background poll while claims find work. New deliveries wake the loop at once instead
   * (notify(): rows written on this node, or a webhookable event from another node on the bus).
   */
  pollMs?: number;
  /** The longest the poll grows to while claims come back empty (docs/webhooks.md "Delivery"). */
  idlePollMs?: number;
  /**
   * Whether deliveries other nodes write are announced to this one now (their events on the bus
   * call notify()). While they are not, the poll keeps to pollMs instead of slowing.
   */
  othersAnnounced?: () => boolean;
  /** How long a claim holds a row. Must outlast an attempt (the timeout) plus recording it. */
  leaseMs?: number;
  /** DNS resolution for delivery-time target checks (tests point names at chosen addresses). */
  lookup?: Lookup;
  /** Where failures of the loop itself go (start() may also set it). */
  log?: DispatcherLog;
  /** Told the outcome of every attempt (metrics). */
  onOutcome?: (outcome: AttemptOutcome['verdict']['kind']) => void;
  /** Told how many deliveries each claim took (metrics). */
  onClaim?: (claimed: number) => void;
}

export interface DispatcherLog {
  error(obj: object, msg: string): void;
}

/** The seam for emailing owners; SMTP is not configured in this deployment, so nothing sends mail yet. */
export interface OwnerMailer {
  notify(keyId: string, notification: Notification): Promise<void>;
}

/** Outcomes are written at most this long after they happen... */
const FLUSH_DELAY_MS = 5;
/** ...or as soon as this many are waiting. */
const FLUSH_BATCH = 256;

/**
 * Claims due deliveries and sends them. Every scheduling decision (what is due, the next attempt,
 * the signature timestamp, the 24 h rule, rotation overlap) reads the injected Clock, so a
 * ManualClock drives the whole schedule; runOnce() does one full pass for tests and tools,
 * start()/stop() run the background loop of a worker.
 */
export class WebhookDispatcher {
  private readonly queue: DeliveryQueue;
  private readonly endpoints: WebhookEndpointStore;
  private readonly directory: DeliveryDirectory;
  private readonly health: HealthMarks;
  private readonly sender: WebhookSender;
  private readonly cap: number;
  private readonly maxInFlight: number;
  private readonly claimBatch: number;
  private readonly claimScan: number;
  private readonly pollMs: number;
  private readonly idlePollMs: number;
  private readonly othersAnnounced: () => boolean;
  /** Claims in a row that found nothing with nothing in flight: the poll doubles with each, up to idlePollMs. */
  private quietPolls = 0;
  /** The earliest retry this process scheduled and has not polled for yet. */
  private retryAt = Infinity;
  private started = false;
  private readonly leaseMs: number;
  private readonly inflight = new Map<string, number>();
  private total = 0;
  private readonly active = new Set<Promise<void>>();
  /** Claims whose attempt has not been recorded yet, by delivery id: what a hurried stop releases. */
  private readonly unrecorded = new Map<string, ClaimedDelivery>();
  private readonly onOutcome: DispatcherOptions['onOutcome'];
  private readonly onClaim: DispatcherOptions['onClaim'];
  private results: { outcome: AttemptOutcome; done: () => void }[] = [];
  private flushing = false;
  private fillTail: Promise<number> = Promise.resolve(0);
  private timer: NodeJS.Timeout | null = null;
  private waking = false;
  private wakeAgain = false;
  private log: DispatcherLog | null = null;
  private freedWaiters: (() => void)[] = [];
  /** Attempts in flight when the last claim-and-launch pass ended (see worthClaiming). */
  private inFlightAfterFill = 0;

  constructor(
    private readonly deps: { db: Db; config: Config; clock: Clock; mailer?: OwnerMailer | null },
    opts: DispatcherOptions = {},
  ) {
    const { config } = deps;
    this.cap = opts.perEndpointConcurrency ?? 8;
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.claimBatch = opts.claimBatch ?? 128;
    this.claimScan = opts.claimScan ?? 4;
    this.pollMs = opts.pollMs ?? 200;
    this.idlePollMs = Math.max(this.pollMs, opts.idlePollMs ?? 2_000);
    this.othersAnnounced = opts.othersAnnounced ?? (() => true);
    this.log = opts.log ?? null;
    this.onOutcome = opts.onOutcome;
    this.onClaim = opts.onClaim;
    this.leaseMs = opts.leaseMs ?? 2 * config.webhookTimeoutMs + 5_000;
    this.health = new HealthMarks(config.webhookDisableAfterS * 1000);
    const box = secretBoxOf(config);
    this.queue = new DeliveryQueue(deps.db);
    this.endpoints = new WebhookEndpointStore(deps.db, box);
    this.directory = new DeliveryDirectory(this.endpoints, deps.db, deps.clock, box);
    this.sender = new WebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
      connectionsPerEndpoint: this.cap,
      lookup: opts.lookup,
    });
  }

  /** Claims and sends everything due now (including what frees up as slots return); resolves when those attempts are recorded. */
  async runOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await this.fill();
      sent += claimed;
      if (this.total > 0) {
        await this.slotsFreed();
        // Let the other attempts that finished meanwhile return their slots: one claim for all.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      if (claimed > 0) continue;
      if (this.active.size === 0) return sent;
      await Promise.allSettled([...this.active]);
    }
  }

  start(log?: DispatcherLog): void {
    if (this.started) return;
    if (log) this.log = log;
    this.started = true;
    this.wake();
  }

  get running(): boolean {
    return this.started;
  }

  /**
   * Stops claiming and waits for the attempts in flight to be recorded. Attempts still running
   * after `graceMs` are released: their rows are due again at once, so another worker sends them
   * now rather than when the lease would have run out. The attempt stays counted: its request may
   * have reached the receiver, and a receiver must never see one delivery's attempt number twice
   * (docs/webhooks.md, "Delivery").
   */
  async stop(graceMs = Infinity): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const settled = Promise.allSettled([...this.active]).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const finished = Number.isFinite(graceMs)
      ? await Promise.race([settled, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)))])
      : await settled;
    clearTimeout(timer);
    if (!finished) await this.releaseUnrecorded();
    await this.sender.close(!finished);
  }

  private async releaseUnrecorded(): Promise<void> {
    const jobs = [...this.unrecorded.values()];
    this.unrecorded.clear();
    try {
      for (const job of jobs) await this.queue.release(job, isoTime(this.deps.clock.now()));
    } catch (err) {
      // The lease still runs out: the rows come back then.
      this.log?.error({ err }, 'webhook dispatcher: releasing claims failed');
    }
  }

  /** An endpoint changed through this process's API: read it again before its next attempt. */
  forget(endpointId: string): void {
    this.directory.forget(endpointId);
  }

  /** New deliveries were written: look now rather than at the next poll. */
  notify(): void {
    if (!this.started) return;
    this.quietPolls = 0;
    setImmediate(() => this.wake());
  }

  private wake(): void {
    if (!this.started) return;
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = true;
    if (this.retryAt <= this.deps.clock.now()) this.retryAt = Infinity;
    this.fill()
      .then((claimed) => {
        this.quietPolls = claimed > 0 || this.total > 0 ? 0 : this.quietPolls + 1;
      })
      .catch((err: unknown) => {
        this.quietPolls += 1;
        this.log?.error({ err }, 'webhook dispatcher: claim failed');
      })
      .finally(() => {
        this.waking = false;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        } else this.pollLater();
      });
  }

  /**
   * The next poll: pollMs while claims find work, twice as long after each claim that found
   * none, up to idlePollMs, and no later than the earliest retry this process scheduled. An idle
   * node's polls were half its CPU (docs/capacity.md); new deliveries do not wait for the poll,
   * except those of other nodes while the bus cannot announce them: then it does not slow.
   */
  private pollLater(): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    const backoff = this.othersAnnounced() ? Math.min(this.idlePollMs, this.pollMs * 2 ** Math.min(this.quietPolls, 20)) : this.pollMs;
    const delay = Math.max(0, Math.min(backoff, this.retryAt - this.deps.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, delay);
    this.timer.unref();
  }

  /** One claim-and-launch pass at a time, whoever asks (background loop or runOnce). */
  private fill(): Promise<number> {
    const next = this.fillTail.then(
      () => this.fillNow(),
      () => this.fillNow(),
    );
    this.fillTail = next.catch(() => 0);
    return next;
  }

  private async fillNow(): Promise<number> {
    let claimed = 0;
    while (this.total < this.maxInFlight) {
      const limit = Math.min(this.claimBatch, this.maxInFlight - this.total);
      const jobs = await this.queue.claim({
        now: this.deps.clock.now(),
        leaseMs: this.leaseMs,
        limit,
        cap: this.cap,
        busy: this.inflight,
        scan: Math.max(64, this.claimScan * limit),
      });
      this.onClaim?.(jobs.length);
      if (jobs.length === 0) break;
      claimed += jobs.length;
      for (const j of jobs) this.take(j.endpoint_id);
      await this.launch(jobs);
      if (jobs.length < limit) break;
    }
    this.inFlightAfterFill = this.total;
    return claimed;
  }

  private take(endpointId: string): void {
    this.inflight.set(endpointId, (this.inflight.get(endpointId) ?? 0) + 1);
    this.total += 1;
  }

  private release(endpointId: string): void {
    const n = (this.inflight.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.inflight.delete(endpointId);
    else this.inflight.set(endpointId, n);
    this.total -= 1;
    const waiters = this.freedWaiters;
    this.freedWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Whether a claim now is worth its statements, `startedWith` attempts having been in flight
   * after the last claim: a quarter of them came back, or nothing is in flight. A claim's two
   * statements and commit cost as much SQL as the outcomes of a dozen deliveries (bench/history/2026-11-24.md
   * "bench/webhooks"); claiming for every slot that comes back cost a claim per delivery whenever
   * the per-endpoint caps, not maxInFlight, bound what is in flight.
   */
  private worthClaiming(startedWith: number): boolean {
    return this.total === 0 || startedWith - this.total >= Math.max(1, Math.floor(startedWith / 4));
  }

  /** Resolves once a claim is worth making. Slots always come back (each attempt ends by its timeout). */
  private async slotsFreed(): Promise<void> {
    const startedWith = this.total;
    do {
      await new Promise<void>((resolve) => this.freedWaiters.push(resolve));
    } while (!this.worthClaiming(startedWith));
  }

  private async launch(jobs: ClaimedDelivery[]): Promise<void> {
    let endpoints: Map<string, EndpointInfo>;
    let bodies: Map<number, Body>;
    try {
      endpoints = await this.directory.endpointsFor(jobs.map((j) => j.endpoint_id));
      bodies = await this.directory.bodiesFor(jobs.map((j) => j.event_seq));
    } catch (err) {
      // The claims stay leased and come back when the lease runs out.
      for (const j of jobs) this.release(j.endpoint_id);
      throw err;
    }
    for (const job of jobs) {
      this.unrecorded.set(job.id, job);
      const p = this.attempt(job, endpoints.get(job.endpoint_id), bodies.get(job.event_seq))
        .then((outcome) => {
          this.onOutcome?.(outcome.verdict.kind);
          return this.record(outcome);
        })
        .catch((err: unknown) => this.log?.error({ err, delivery: job.id }, 'webhook dispatcher: attempt failed'))
        .finally(() => this.unrecorded.delete(job.id));
      this.active.add(p);
      void p.finally(() => this.active.delete(p));
    }
  }

  private async attempt(job: ClaimedDelivery, ep: EndpointInfo | undefined, body: Body | undefined): Promise<AttemptOutcome> {
    const at = this.deps.clock.now();
    const skip = (verdict: Verdict): AttemptOutcome => {
      this.release(job.endpoint_id);
      return { job, verdict, at, statusCode: null, error: null, durationMs: 0, excerpt: null };
    };
    if (!ep || ep.status !== 'enabled') return skip({ kind: 'cancel', status: 'disabled', reason: 'endpoint disabled before the attempt' });
    if (ep.ownerProblem) return skip({ kind: 'cancel', status: 'failed', reason: ep.ownerProblem });
    if (!body) return skip({ kind: 'cancel', status: 'failed', reason: `event ${job.event_id} no longer exists` });
    if (job.attempts > ep.maxAttempts) return skip({ kind: 'cancel', status: 'failed', reason: 'retries exhausted' });

    const t = Math.floor(at / 1000);
    let result;
    try {
      result = await this.sender.send({
        endpointId: ep.id,
        url: ep.url,
        body: body.text,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-svc-topic': body.topic,
          'x-svc-event-id': job.event_id,
          'x-svc-delivery-id': job.id,
          'x-svc-attempt': String(job.attempts),
          'x-svc-signature': signPayload(signingSecrets(ep, at), body.text, t),
        },
      });
    } finally {
      this.release(job.endpoint_id);
      // The background loop claims again once a claim is worth its statements, as runOnce does;
      // new rows (notify) and the poll wake it whatever is in flight.
      if (this.started && this.worthClaiming(this.inFlightAfterFill)) this.wake();
    }
    const d = deliveryDecision({
      status: result.statusCode ?? undefined,
      error: result.error ?? undefined,
      attemptsMade: job.attempts,
      maxAttempts: ep.maxAttempts,
      delaysS: this.deps.config.webhookRetryDelaysS,
      now: this.deps.clock.now(),
    });
    if (d.outcome === 'retry') this.retryAt = Math.min(this.retryAt, d.nextAttemptAt);
    const verdict: Verdict =
      d.outcome === 'retry' ? { kind: 'retry', nextAttemptAt: d.nextAttemptAt } : d.outcome === 'delivered' ? { kind: 'delivered' } : d.outcome === 'gone' ? { kind: 'gone' } : { kind: 'failed' };
    return { job, verdict, at, ...result };
  }

  /** Outcomes are written in batches: one transaction for everything that finished meanwhile. */
  private record(outcome: AttemptOutcome): Promise<void> {
    return new Promise<void>((resolve) => {
      this.results.push({ outcome, done: resolve });
      if (this.flushing) return;
      // One transaction per attempt would cost more than the attempts: gather for a moment
      // (or until a full batch) and write them together.
      this.flushing = true;
      if (this.results.length >= FLUSH_BATCH) void this.flush();
      else setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.results.length) {
        const batch = this.results.splice(0, FLUSH_BATCH);
        try {
          const notes = await recordOutcomes(
            this.deps.db,
            batch.map((b) => b.outcome),
            this.deps.clock.now(),
            this.deps.config.webhookDisableAfterS * 1000,
            this.health,
          );
          for (const n of notes) {
            if (n.endpoint_id) this.directory.forget(n.endpoint_id);
            this.mail(n);
          }
        } catch (err) {
          // Unrecorded attempts stay leased and are retried when the lease ends: at least once.
          this.log?.error({ err }, 'webhook dispatcher: recording outcomes failed');
        } finally {
          for (const b of batch) b.done();
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private mail(n: Notification): void {
    const mailer = this.deps.mailer;
    if (!mailer || !n.endpoint_id) return;
    void this.endpoints
      .ownerOf(n.endpoint_id)
      .then((keyId) => (keyId ? mailer.notify(keyId, n) : undefined))
      .catch((err: unknown) => this.log?.error({ err }, 'webhook dispatcher: owner email failed'));
  }
}
