import type { Selectable } from 'kysely';
import { DELIVERY_STATUSES, type DeliveryStatus, type Notification, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint } from '@svc/schema';
import type { NotificationTable, WebhookAttemptTable, WebhookDeliveryTable, WebhookEndpointTable } from './types.js';

/**
 * The webhook tables' rows and their API records, and nothing else (no SQL): the webhook
 * repositories and the webhooks feature map rows through here, so none of them needs another.
 */
export type EndpointRow = Selectable<WebhookEndpointTable>;
export type DeliveryRow = Selectable<WebhookDeliveryTable>;
export type AttemptRow = Selectable<WebhookAttemptTable>;
export type NotificationRow = Selectable<NotificationTable>;

export const parseList = (s: string | null): string[] | null => (s === null ? null : (JSON.parse(s) as string[]));

export function endpointRecord(r: EndpointRow, nowIso: string): WebhookEndpoint {
  const overlap = r.previous_secret !== null && r.previous_secret_until !== null && r.previous_secret_until > nowIso;
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    sports: parseList(r.sports),
    tier: 'confirmed',
    types: parseList(r.types ?? null),
    min_probability: Number(r.min_probability ?? 0),
    status: r.status === 'enabled' ? 'enabled' : 'disabled',
    disabled_reason: r.disabled_reason,
    disabled_at: r.disabled_at,
    previous_secret_expires_at: overlap ? r.previous_secret_until : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const asStatus = (s: string): DeliveryStatus => DELIVERY_STATUSES.find((x) => x === s) ?? 'pending';

export function deliveryRecord(r: DeliveryRow): WebhookDelivery {
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

export const attemptRecord = (r: AttemptRow): WebhookAttempt => ({
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
