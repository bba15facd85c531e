import { Type } from '@sinclair/typebox';
import { ErrorBody, ListOf, One } from '@svc/schema';
import { DELIVERY_STATUSES } from '../../webhooks/records.js';
import { IdParams, errorResponses, pageQuery } from '../common.js';

const Iso = Type.String({ description: 'ISO 8601 UTC timestamp.' });
const NullableIso = Type.Union([Iso, Type.Null()]);

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'we_…' }),
    url: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    sports: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Sports delivered; null for every sport the key may see.' }),
    tier: Type.Literal('confirmed'),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: '`failing` (24 h without a 2xx) or `gone` (the receiver answered 410).' }),
    disabled_at: NullableIso,
    previous_secret_expires_at: Type.Union([Iso, Type.Null()], { description: 'After a rotation, when the old secret stops signing beside the new one.' }),
    created_at: Iso,
    updated_at: Iso,
  },
  { $id: 'WebhookEndpoint', additionalProperties: false },
);

export const WebhookEndpointWithSecret = Type.Object(
  { ...WebhookEndpoint.properties, secret: Type.String({ description: 'whsec_…: signs every delivery. Shown only in this answer.' }) },
  { additionalProperties: false },
);

export const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));

export const Delivery = Type.Object(
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
  { $id: 'WebhookDelivery', additionalProperties: false },
);

export const Attempt = Type.Object(
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

export const DeliveryWithAttempts = Type.Object({ ...Delivery.properties, attempt_log: Type.Array(Attempt) }, { additionalProperties: false });

const Sports = Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1, maxItems: 16 });
const Description = Type.String({ maxLength: 500 });

export const CreateBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute https URL (http only where private targets are allowed).' }),
    sports: Type.Optional(Sports),
    tier: Type.String({ description: 'Must be `confirmed`.' }),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);

export const PatchBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    // Null first: with type coercion on, ajv would otherwise turn null into "" for the string branch.
    sports: Type.Optional(Type.Union([Type.Null(), Sports])),
    description: Type.Optional(Type.Union([Type.Null(), Description])),
  },
  { additionalProperties: false },
);

export const ReplayById = Type.Object({ delivery_id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const ReplayRange = Type.Object(
  { from: Type.String({ format: 'date-time', maxLength: 40 }), to: Type.String({ format: 'date-time', maxLength: 40 }) },
  { additionalProperties: false },
);

export const ReplayResult = Type.Object(
  { replayed: Type.Integer(), delivery_ids: Type.Array(Type.String()) },
  { additionalProperties: false },
);

const tags = ['webhooks'];
const DeliveryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }), delivery_id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
const responses = { ...errorResponses, 409: ErrorBody };

export const createWebhook = {
  tags,
  summary: 'Register a webhook endpoint; the answer carries its signing secret (shown once)',
  body: CreateBody,
  response: { 201: One(WebhookEndpointWithSecret), ...responses },
};
export const listWebhooks = {
  tags,
  summary: 'Webhook endpoints of the calling key, oldest first',
  querystring: Type.Object({ ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(WebhookEndpoint), ...responses },
};
export const getWebhook = { tags, summary: 'One webhook endpoint', params: IdParams, response: { 200: One(WebhookEndpoint), ...responses } };
export const patchWebhook = {
  tags,
  summary: 'Change url, sports or description',
  params: IdParams,
  body: PatchBody,
  response: { 200: One(WebhookEndpoint), ...responses },
};
export const deleteWebhook = {
  tags,
  summary: 'Delete an endpoint with its deliveries',
  params: IdParams,
  response: { 200: One(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false })), ...responses },
};
export const listDeliveries = {
  tags,
  summary: 'Deliveries of an endpoint, newest first',
  params: IdParams,
  querystring: Type.Object({ status: Type.Optional(DeliveryStatus), ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Delivery), ...responses },
};
export const getDelivery = {
  tags,
  summary: 'One delivery with its attempt log',
  params: DeliveryParams,
  response: { 200: One(DeliveryWithAttempts), ...responses },
};
export const replayWebhook = {
  tags,
  summary: 'Replay one delivery ({"delivery_id"}) or every event in a time range ({"from","to"}) as new deliveries',
  params: IdParams,
  body: Type.Union([ReplayById, ReplayRange]),
  response: { 202: One(ReplayResult), ...responses },
};
export const enableWebhook = { tags, summary: 'Re-enable a disabled endpoint', params: IdParams, response: { 200: One(WebhookEndpoint), ...responses } };
export const rotateSecret = {
  tags,
  summary: 'New signing secret; the old one keeps signing beside it for 24 h',
  params: IdParams,
  response: { 200: One(WebhookEndpointWithSecret), ...responses },
};

export const TestSendResult = Type.Object(
  {
    endpoint_id: Type.String(),
    event_id: Type.String({ description: 'The test event\'s id (X-SVC-Event-Id).' }),
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

export const testWebhook = {
  tags,
  summary: 'Send a signed test event to the endpoint now',
  description:
    'POSTs one signed event of type `test` (topic `event.test`, `schema` `svc.event.v1`) to the endpoint at once, with the same headers, signature, target checks and timeout as a delivery, outside the retry budget: no delivery is stored and the endpoint\'s health is untouched. Works on a disabled endpoint too. 200 with the attempt\'s outcome whatever the receiver answered.',
  params: IdParams,
  response: { 200: One(TestSendResult), ...responses },
};
