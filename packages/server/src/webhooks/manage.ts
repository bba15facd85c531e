import {
  SPORTS,
  type CreateWebhookInput,
  type DeliveryStatus,
  type Notification,
  type ReplayInput,
  type ReplayResult,
  type UpdateWebhookInput,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '@svc/schema';
import type { Config } from '../config.js';
import { isoTime, type Clock } from '../domain/clock.js';
import { conflict, invalid, notFound, SvcError } from '../domain/errors.js';
import { parseEventTypes } from '../domain/event-types.js';
import { requireScope, type Principal } from '../domain/scopes.js';
import { generateSecret } from '../domain/webhooks/signature.js';
import { validateWebhookUrl } from '../domain/webhooks/target.js';
import { resolveSafeTarget, type Lookup } from './target-resolver.js';
import type { ReplayScope } from '../store/events/events.js';
import type { NotificationStore } from '../store/webhooks/notifications.js';
import type { Page, PageRequest } from '../store/sql/page.js';
import { newDeliveryIds, pendingDelivery, type WebhookDeliveryStore } from '../store/webhooks/deliveries.js';
import { newEndpointId, type EndpointPatch, type WebhookEndpointStore } from '../store/webhooks/endpoints.js';
import { endpointRecord, parseList, type EndpointRow } from '../store/webhooks/rows.js';
import type { TestSendResult, WebhookTester } from './test-event.js';

/** After a rotation the old secret signs beside the new one this long. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** A range replay reaches back at most this far (the spec's "replay window"). */
export const REPLAY_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
/** Events one range replay may enqueue; a wider range is refused rather than truncated. */
export const REPLAY_MAX_EVENTS = 10_000;

/** What the webhook API reads and writes: one repository per owner of its tables (docs/architecture.md, "Persistence"). */
export interface WebhookStores {
  endpoints: WebhookEndpointStore;
  deliveries: WebhookDeliveryStore;
  notifications: NotificationStore;
}

/**
 * The webhook API's rules: owned-only access (another key's endpoint is a 404), target checks,
 * sport scope, plan limits, rotation and replay. Throws SvcError; no HTTP here.
 */
export class WebhookManager {
  constructor(
    private readonly store: WebhookStores,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly hooks: { enqueued(): void; changed(endpointId: string): void },
    private readonly tester: WebhookTester,
    private readonly lookup?: Lookup,
  ) {}

  private nowIso(): string {
    return isoTime(this.clock.now());
  }

  private record(row: EndpointRow): WebhookEndpoint {
    return endpointRecord(row, this.nowIso());
  }

  private async owned(p: Principal, id: string): Promise<EndpointRow> {
    const row = await this.store.endpoints.get(p.keyId, id);
    if (!row) throw notFound('webhook endpoint', id, 'id');
    return row;
  }

  /** Registration-time target check; deliveries check the resolved address again every time. */
  private async checkUrl(raw: string): Promise<string> {
    const allowPrivate = this.config.webhookAllowPrivate;
    const valid = validateWebhookUrl(raw, { allowPrivate });
    if (!valid.ok) throw invalid('invalid_url', `'url': ${valid.reason}.`, 'url');
    if (!allowPrivate) {
      const target = await resolveSafeTarget(valid.url, { allowPrivate, lookup: this.lookup });
      // A name that does not resolve yet is accepted: the delivery-time check is the one that
      // guards the connection, and receivers often register before their DNS is live.
      if (!target.ok && target.code !== 'dns_failed' && target.code !== 'dns_empty') throw invalid('invalid_url', `'url': ${target.reason}.`, 'url');
    }
    return valid.url.href;
  }

  private checkSports(p: Principal, sports: readonly string[]): string[] {
    sports.forEach((s, i) => {
      if (!SPORTS.some((x) => x === s)) throw invalid('unknown_sport', `Unknown sport '${s}'; one of ${SPORTS.join(', ')}.`, `sports[${i}]`);
      requireScope(p, s, undefined, `sports[${i}]`);
    });
    return [...new Set(sports)];
  }

  async create(p: Principal, input: CreateWebhookInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    if (input.tier !== 'confirmed') throw invalid('unsupported_tier', "Webhooks deliver confirmed events: 'tier' must be 'confirmed'.", 'tier');
    const sports = input.sports === undefined ? null : this.checkSports(p, input.sports);
    const types = parseEventTypes(input.types);
    const url = await this.checkUrl(input.url);
    const limit = p.plan.webhookEndpoints;
    if ((await this.store.endpoints.count(p.keyId)) >= limit) {
      throw new SvcError('webhook_endpoint_limit', `The ${p.plan.name} plan allows ${limit} webhook endpoints; delete one before adding another.`);
    }
    const now = this.nowIso();
    const secret = generateSecret();
    const row = await this.store.endpoints.create({
      id: newEndpointId(),
      key_id: p.keyId,
      url,
      description: input.description ?? null,
      sports: sports === null ? null : JSON.stringify(sports),
      types: types === null ? null : JSON.stringify(types),
      min_probability: input.min_probability ?? 0,
      tier: 'confirmed',
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      secret,
      previous_secret: null,
      previous_secret_until: null,
      last_success_at: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    });
    return { endpoint: this.record(row), secret };
  }

  async list(p: Principal, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    const rows = await this.store.endpoints.list(p.keyId, page);
    return { data: rows.data.map((r) => this.record(r)), next_cursor: rows.next_cursor };
  }

  async get(p: Principal, id: string): Promise<WebhookEndpoint> {
    return this.record(await this.owned(p, id));
  }

  async update(p: Principal, id: string, input: UpdateWebhookInput): Promise<WebhookEndpoint> {
    await this.owned(p, id);
    const { types, ...patch } = input;
    const clean: EndpointPatch = { ...patch, ...(types !== undefined ? { types: parseEventTypes(types) } : {}) };
    if (patch.sports) clean.sports = this.checkSports(p, patch.sports);
    if (patch.url !== undefined) clean.url = await this.checkUrl(patch.url);
    const row = await this.store.endpoints.update(p.keyId, id, clean, this.nowIso());
    if (!row) throw notFound('webhook endpoint', id, 'id');
    this.hooks.changed(id);
    return this.record(row);
  }

  async remove(p: Principal, id: string): Promise<void> {
    if (!(await this.store.endpoints.delete(p.keyId, id))) throw notFound('webhook endpoint', id, 'id');
    this.hooks.changed(id);
  }

  async enable(p: Principal, id: string): Promise<WebhookEndpoint> {
    const row = await this.store.endpoints.enable(p.keyId, id, this.nowIso());
    if (!row) throw notFound('webhook endpoint', id, 'id');
    this.hooks.changed(id);
    return this.record(row);
  }

  async rotateSecret(p: Principal, id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = generateSecret();
    const row = await this.store.endpoints.rotateSecret(p.keyId, id, secret, isoTime(this.clock.now() + ROTATION_OVERLAP_MS), this.nowIso());
    if (!row) throw notFound('webhook endpoint', id, 'id');
    this.hooks.changed(id);
    return { endpoint: this.record(row), secret };
  }

  async deliveries(p: Principal, id: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<Page<WebhookDelivery>> {
    await this.owned(p, id);
    return this.store.deliveries.list(id, status, page);
  }

  async delivery(p: Principal, id: string, deliveryId: string): Promise<WebhookDelivery & { attempt_log: WebhookAttempt[] }> {
    await this.owned(p, id);
    const found = await this.store.deliveries.get(id, deliveryId);
    if (!found) throw notFound('delivery', deliveryId, 'delivery_id');
    return { ...found.delivery, attempt_log: found.attempts };
  }

  /** New deliveries of the same events: a replay never rewrites history, it adds to it. */
  async replay(p: Principal, id: string, input: ReplayInput): Promise<ReplayResult> {
    const ep = await this.owned(p, id);
    if (ep.status !== 'enabled') {
      throw conflict('endpoint_disabled', `Webhook endpoint ${id} is disabled; enable it (POST /v1/webhooks/${id}/enable) before replaying.`);
    }
    const now = this.clock.now();
    const nowIso = isoTime(now);
    let seqs: { seq: number; replayOf: string | null }[];
    if ('delivery_id' in input) {
      const found = await this.store.deliveries.get(id, input.delivery_id);
      if (!found) throw notFound('delivery', input.delivery_id, 'delivery_id');
      seqs = [{ seq: found.seq, replayOf: found.delivery.id }];
    } else {
      const from = Date.parse(input.from);
      const to = Date.parse(input.to);
      if (!(from < to)) throw invalid('invalid_range', "'from' must be before 'to'.", 'from');
      if (from < now - REPLAY_WINDOW_MS) throw invalid('outside_replay_window', `'from' may reach back at most ${REPLAY_WINDOW_MS / 86_400_000} days.`, 'from');
      const found = await this.store.deliveries.replayableEvents(this.replayScope(p, ep), isoTime(from), isoTime(to), REPLAY_MAX_EVENTS);
      if (found.length > REPLAY_MAX_EVENTS) {
        throw invalid('replay_too_large', `More than ${REPLAY_MAX_EVENTS} events fall in the range; replay it in smaller ranges.`, 'to');
      }
      seqs = found.map((seq) => ({ seq, replayOf: null }));
    }
    const ids = newDeliveryIds(seqs.length, now);
    const rows = seqs.map((s, i) => pendingDelivery(ids[i], id, s.seq, nowIso, s.replayOf));
    if (rows.length) {
      await this.store.deliveries.add(rows);
      this.hooks.enqueued();
    }
    return { replayed: rows.length, delivery_ids: rows.map((r) => r.id) };
  }

  /**
   * One signed `test` event to the endpoint now, whatever its status (a disabled endpoint can be
   * checked before it is re-enabled); the answer is the attempt's outcome.
   */
  async sendTest(p: Principal, id: string): Promise<TestSendResult> {
    return this.tester.send(await this.owned(p, id));
  }

  /** What a range replay may send: the endpoint's sports within the key's sports and leagues. */
  private replayScope(p: Principal, ep: EndpointRow): ReplayScope {
    const wanted = parseList(ep.sports);
    const sports = wanted && p.sports ? wanted.filter((s) => p.sports?.includes(s)) : (wanted ?? (p.sports ? [...p.sports] : null));
    return { sports, leagues: p.leagues, viewerKeyId: p.keyId, minProbability: Number(ep.min_probability ?? 0), types: parseList(ep.types ?? null) };
  }

  async notifications(p: Principal, page: PageRequest): Promise<Page<Notification>> {
    return this.store.notifications.list(p.keyId, page);
  }
}
