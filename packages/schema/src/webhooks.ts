/** Webhook endpoints, their deliveries and attempts, notifications, and the inputs that manage them. */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from './events.js';

const Iso = Type.String({ description: 'ISO 8601 UTC timestamp.' });
const NullableIso = Type.Union([Iso, Type.Null()]);

export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
/** Why an endpoint is disabled: `failing` (24 h without a 2xx) or `gone` (the receiver answered 410). */
export const DISABLED_REASONS = ['failing', 'gone'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'disabled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** `min_probability` of an endpoint (docs/webhooks.md): events whose `confidence.probability` is below it are not delivered. */
export const MinProbability = Type.Number({
  minimum: 0,
  maximum: 1,
  description: 'Events whose `confidence.probability` is below this are not delivered (0: every event). A `score_retracted` carries the probability of the event it withdraws, so it is delivered exactly when that event was.',
});

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'we_…' }),
    url: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    sports: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Sports delivered; null for every sport the key may see.' }),
    tier: Type.Literal('confirmed'),
    types: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Event types delivered (`score`, `score_retracted`, `status`); null for every type.' }),
    min_probability: MinProbability,
    status: Type.Union(ENDPOINT_STATUSES.map((s) => Type.Literal(s))),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: '`failing` (24 h without a 2xx) or `gone` (the receiver answered 410).' }),
    disabled_at: NullableIso,
    previous_secret_expires_at: Type.Union([Iso, Type.Null()], { description: 'After a rotation, when the old secret stops signing beside the new one.' }),
    created_at: Iso,
    updated_at: Iso,
  },
  { additionalProperties: false },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  { ...WebhookEndpoint.properties, secret: Type.String({ description: 'whsec_…: signs every delivery. Shown only in this answer.' }) },
  { additionalProperties: false },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'dlv_…; the X-SVC-Delivery-Id header. Retries keep it.' }),
    endpoint_id: Type.String(),
    event_id: Type.String({ description: 'The X-SVC-Event-Id header: dedupe on it.' }),
    status: DeliveryStatus,
    attempts: Type.Integer(),
    next_attempt_at: NullableIso,
    last_attempt_at: NullableIso,
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Iso,
    delivered_at: NullableIso,
  },
  { additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer(),
    at: Iso,
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'At most 1 KiB of the answer.' }),
  },
  { additionalProperties: false },
);
export type WebhookAttempt = Static<typeof WebhookAttempt>;

export const WebhookDeliveryWithAttempts = Type.Object(
  { ...WebhookDelivery.properties, attempt_log: Type.Array(WebhookAttempt) },
  { additionalProperties: false },
);
export type WebhookDeliveryWithAttempts = Static<typeof WebhookDeliveryWithAttempts>;

export const Notification = Type.Object(
  {
    id: Type.String({ description: 'ntf_…' }),
    type: Type.String({ description: 'e.g. `webhook_endpoint.disabled`' }),
    endpoint_id: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    message: Type.String(),
    created_at: Type.String(),
  },
  { additionalProperties: false },
);
export type Notification = Static<typeof Notification>;

const Sports = Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1, maxItems: 16 });
const Description = Type.String({ maxLength: 500 });
/** The event types an endpoint wants: a list, or the same as a comma string (`score,status`). */
const EventTypeName = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));
const Types = Type.Union([
  Type.Array(EventTypeName, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true }),
  Type.String({ pattern: `^(${EVENT_TYPES.join('|')})(,(${EVENT_TYPES.join('|')}))*$`, maxLength: 100 }),
], { description: 'Event types to deliver, as a list or a comma string; absent: every type.' });

export const CreateWebhookInput = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute https URL (http only where private targets are allowed).' }),
    sports: Type.Optional(Sports),
    types: Type.Optional(Types),
    min_probability: Type.Optional(MinProbability),
    tier: Type.String({ description: 'Must be `confirmed`.' }),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookInput>;

export const UpdateWebhookInput = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    // Null first: with type coercion on, ajv would otherwise turn null into "" for the string branch.
    sports: Type.Optional(Type.Union([Type.Null(), Sports])),
    types: Type.Optional(Type.Union([Type.Null(), Types])),
    description: Type.Optional(Type.Union([Type.Null(), Description])),
    min_probability: Type.Optional(MinProbability),
  },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookInput>;

export const ReplayByDelivery = Type.Object({ delivery_id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const ReplayRange = Type.Object(
  { from: Type.String({ format: 'date-time', maxLength: 40 }), to: Type.String({ format: 'date-time', maxLength: 40 }) },
  { additionalProperties: false },
);
export const ReplayInput = Type.Union([ReplayByDelivery, ReplayRange]);
export type ReplayInput = Static<typeof ReplayInput>;

export const ReplayResult = Type.Object({ replayed: Type.Integer(), delivery_ids: Type.Array(Type.String()) }, { additionalProperties: false });
export type ReplayResult = Static<typeof ReplayResult>;

export const DeletedWebhook = Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false });
export type DeletedWebhook = Static<typeof DeletedWebhook>;

/** The answer of `POST /v1/webhooks/{id}/test`: the outcome of the one signed test send. */
export const WebhookTestResult = Type.Object(
  {
    endpoint_id: Type.String(),
    event_id: Type.String({ description: "The test event's id (X-SVC-Event-Id)." }),
    delivery_id: Type.String({ description: 'The X-SVC-Delivery-Id header sent; test sends are not stored as deliveries.' }),
    delivered: Type.Boolean({ description: 'The receiver answered 2xx within the timeout.' }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer(),
    response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'At most 1 KiB of the answer.' }),
    error: Type.Union([Type.String(), Type.Null()]),
    sent_at: Iso,
  },
  { $id: 'WebhookTestResult', additionalProperties: false },
);
export type WebhookTestResult = Static<typeof WebhookTestResult>;
