/** Webhook tables as stored. Times are ISO 8601 UTC text (they sort as text); JSON columns are text. */
export interface WebhookEndpointTable {
  id: string;
  /** The API key that owns the endpoint: only it sees and changes it. */
  key_id: string;
  url: string;
  description: string | null;
  /** JSON array of sports, or null for every sport the key may see. */
  sports: string | null;
  /** JSON array of event types, or null (or absent, on a row older than the column) for every type. */
  types?: string | null;
  /** Events below this `confidence.probability` are not delivered (migration 0016; absent on a row older than it: 0). */
  min_probability?: number;
  tier: string;
  status: string;
  disabled_reason: string | null;
  disabled_at: string | null;
  secret: string;
  /** After a rotation the old secret keeps signing beside the new one until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: string | null;
  last_success_at: string | null;
  /** First failed attempt since the last 2xx: the start of the auto-disable window. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveryTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  status: string;
  attempts: number;
  /** Due time while pending; while an attempt is in flight, the end of its lease. */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  /** Set by each claim; a result is only written by the claim that still holds the row. */
  claim_token: string | null;
  replay_of: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface WebhookAttemptTable {
  delivery_id: string;
  attempt: number;
  endpoint_id: string;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

export interface NotificationTable {
  id: string;
  key_id: string;
  type: string;
  endpoint_id: string | null;
  reason: string | null;
  message: string;
  created_at: string;
}

export interface WebhookDatabase {
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  notifications: NotificationTable;
}
