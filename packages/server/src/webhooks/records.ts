import type { Selectable } from 'kysely';
import type { NotificationTable, WebhookAttemptTable, WebhookDeliveryTable, WebhookEndpointTable } from '../store/webhook-types.js';

export type EndpointRow = Selectable<WebhookEndpointTable>;
export type DeliveryRow = Selectable<WebhookDeliveryTable>;
export type AttemptRow = Selectable<WebhookAttemptTable>;
export type NotificationRow = Selectable<NotificationTable>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'disabled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type EndpointStatus = 'enabled' | 'disabled';
/** Why an endpoint is disabled: `failing` (24 h without a 2xx) or `gone` (the receiver answered 410). */
export type DisabledReason = 'failing' | 'gone';

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  sports: string[] | null;
  tier: 'confirmed';
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: string | null;
  /** While an old secret still signs beside the new one, when it stops. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The delivery record of DESIGN §4, field for field. */
export interface Delivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface Attempt {
  attempt: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

export interface Notification {
  id: string;
  type: string;
  endpoint_id: string | null;
  reason: string | null;
  message: string;
  created_at: string;
}

export const parseList = (s: string | null): string[] | null => (s === null ? null : (JSON.parse(s) as string[]));

export function endpointRecord(r: EndpointRow, nowIso: string): WebhookEndpoint {
  const overlap = r.previous_secret !== null && r.previous_secret_until !== null && r.previous_secret_until > nowIso;
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    sports: parseList(r.sports),
    tier: 'confirmed',
    status: r.status === 'enabled' ? 'enabled' : 'disabled',
    disabled_reason: r.disabled_reason,
    disabled_at: r.disabled_at,
    previous_secret_expires_at: overlap ? r.previous_secret_until : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const asStatus = (s: string): DeliveryStatus => DELIVERY_STATUSES.find((x) => x === s) ?? 'pending';

export function deliveryRecord(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    endpoint_id: r.endpoint_id,
    event_id: r.event_id,
    status: asStatus(r.status),
    attempts: r.attempts,
    next_attempt_at: r.status === 'pending' ? r.next_attempt_at : null,
    last_attempt_at: r.last_attempt_at,
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    created_at: r.created_at,
    delivered_at: r.delivered_at,
  };
}

export const attemptRecord = (r: AttemptRow): Attempt => ({
  attempt: r.attempt,
  at: r.at,
  status_code: r.status_code,
  duration_ms: r.duration_ms,
  error: r.error,
  response_excerpt: r.response_excerpt,
});

export const notificationRecord = (r: NotificationRow): Notification => ({
  id: r.id,
  type: r.type,
  endpoint_id: r.endpoint_id,
  reason: r.reason,
  message: r.message,
  created_at: r.created_at,
});
