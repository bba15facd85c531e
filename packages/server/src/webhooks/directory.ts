import { webhookTopic, wireEvent } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import { planOf } from '../domain/plans.js';
import type { SecretBox } from '../domain/secrets/sealed.js';
import { endpointSecretAad } from '../domain/secrets/columns.js';
import { DEFAULT_MAX_ATTEMPTS } from '../domain/webhooks/schedule.js';
import { eventsBySeq } from '../store/events/events.js';
import type { Db } from '../store/sql/db.js';
import type { WebhookEndpointStore } from '../store/webhooks/endpoints.js';

/** What an attempt needs to know about its endpoint and the endpoint's owner. */
export interface EndpointInfo {
  id: string;
  keyId: string;
  url: string;
  status: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: string | null;
  maxAttempts: number;
  /** Why the owner may no longer receive deliveries, or null. */
  ownerProblem: string | null;
}

/** The secrets that sign at `now` (epoch ms): the current one, and the previous one during its overlap. */
export function signingSecrets(ep: Pick<EndpointInfo, 'secret' | 'previousSecret' | 'previousSecretUntil'>, now: number): string[] {
  // Without a rotation under way (nearly always) no time is formatted.
  if (!ep.previousSecret || !ep.previousSecretUntil) return [ep.secret];
  return ep.previousSecretUntil > isoTime(now) ? [ep.secret, ep.previousSecret] : [ep.secret];
}

/** An endpoint row's secrets in clear: the current one and, during a rotation, the previous one. */
export function openEndpointSecrets(
  box: SecretBox,
  row: { id: string; secret: string; previous_secret: string | null },
): { secret: string; previousSecret: string | null } {
  const aad = endpointSecretAad(row.id);
  return {
    secret: box.open(row.secret, aad, `the secret of webhook endpoint ${row.id}`),
    previousSecret: row.previous_secret === null ? null : box.open(row.previous_secret, aad, `the previous secret of webhook endpoint ${row.id}`),
  };
}

/** Endpoints change rarely and are read for every claim: kept this long (Clock time) unless forgotten. */
const ENDPOINT_TTL_MS = 1_000;
const BODY_CACHE = 4_096;

export interface Body {
  text: string;
  topic: string;
}

/**
 * Endpoint and event lookups of the dispatcher, cached. A change made through this process's
 * API is seen at once (forget); one made on another node within ENDPOINT_TTL_MS.
 */
export class DeliveryDirectory {
  private readonly endpoints = new Map<string, { info: EndpointInfo | null; at: number }>();
  private readonly bodies = new Map<number, Body>();

  constructor(
    private readonly endpointStore: WebhookEndpointStore,
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
  ) {}

  forget(endpointId?: string): void {
    if (endpointId === undefined) this.endpoints.clear();
    else this.endpoints.delete(endpointId);
  }

  async endpointsFor(ids: readonly string[]): Promise<Map<string, EndpointInfo>> {
    const now = this.clock.now();
    const out = new Map<string, EndpointInfo>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const hit = this.endpoints.get(id);
      if (hit && now - hit.at < ENDPOINT_TTL_MS && now >= hit.at) {
        if (hit.info) out.set(id, hit.info);
      } else missing.push(id);
    }
    if (missing.length === 0) return out;
    const rows = await this.endpointStore.attemptTargets(missing);
    for (const id of missing) this.endpoints.set(id, { info: null, at: now });
    for (const r of rows) {
      const products: string[] = r.products ? (JSON.parse(r.products) as string[]) : [];
      let maxAttempts = DEFAULT_MAX_ATTEMPTS;
      try {
        if (r.plan) maxAttempts = planOf(r.plan).webhookMaxAttempts;
      } catch {
        // An unknown plan name keeps the documented default rather than stopping deliveries.
      }
      const ownerProblem = !r.plan || r.revoked_at ? "the endpoint's API key was revoked" : !products.includes('live') ? "the endpoint's API key no longer holds the live product" : null;
      const info: EndpointInfo = {
        id: r.id,
        keyId: r.key_id,
        url: r.url,
        status: r.status,
        ...openEndpointSecrets(this.secrets, r),
        previousSecretUntil: r.previous_secret_until,
        maxAttempts,
        ownerProblem,
      };
      this.endpoints.set(r.id, { info, at: now });
      out.set(r.id, info);
    }
    if (this.endpoints.size > 10_000) this.endpoints.clear();
    return out;
  }

  /** The body of each event, serialised once: the exact bytes that are signed and sent. */
  async bodiesFor(seqs: readonly number[]): Promise<Map<number, Body>> {
    const out = new Map<number, Body>();
    const missing = new Set<number>();
    for (const seq of seqs) {
      const hit = this.bodies.get(seq);
      if (hit) out.set(seq, hit);
      else missing.add(seq);
    }
    if (missing.size === 0) return out;
    for (const { seq, event } of await eventsBySeq(this.db, [...missing])) {
      const body = { text: JSON.stringify(wireEvent(event)), topic: webhookTopic(event.type) };
      out.set(seq, body);
      this.bodies.set(seq, body);
    }
    while (this.bodies.size > BODY_CACHE) {
      const [oldest] = this.bodies.keys();
      this.bodies.delete(oldest);
    }
    return out;
  }
}
