import { Type } from '@sinclair/typebox';
import {
  CreateWebhookInput,
  DeletedWebhook,
  ErrorBody,
  ListDeliveriesQuery,
  ListOf,
  One,
  PageQuery,
  ReplayInput,
  ReplayResult,
  UpdateWebhookInput,
  WebhookTestResult,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '@svc/schema';
import { WebhookIdParams, errorResponses } from '../common.js';

const tags = ['webhooks'];
const DeliveryParams = Type.Object(
  { ...WebhookIdParams.properties, delivery_id: Type.String({ minLength: 1, maxLength: 200, description: 'The delivery’s id (`dlv_…`).' }) },
  { additionalProperties: false },
);
const responses = { ...errorResponses, 409: ErrorBody };

export const createWebhook = {
  tags,
  summary: 'Register a webhook endpoint; the answer carries its signing secret (shown once)',
  body: CreateWebhookInput,
  response: { 201: One(WebhookEndpointWithSecret), ...responses },
};
export const listWebhooks = {
  tags,
  summary: 'Webhook endpoints of the calling key, oldest first',
  querystring: PageQuery,
  response: { 200: ListOf(WebhookEndpoint), ...responses },
};
export const getWebhook = { tags, summary: 'One webhook endpoint', params: WebhookIdParams, response: { 200: One(WebhookEndpoint), ...responses } };
export const patchWebhook = {
  tags,
  summary: 'Change url, sports or description',
  params: WebhookIdParams,
  body: UpdateWebhookInput,
  response: { 200: One(WebhookEndpoint), ...responses },
};
export const deleteWebhook = {
  tags,
  summary: 'Delete an endpoint with its deliveries',
  params: WebhookIdParams,
  response: { 200: One(DeletedWebhook), ...responses },
};
export const listDeliveries = {
  tags,
  summary: 'Deliveries of an endpoint, newest first',
  params: WebhookIdParams,
  querystring: ListDeliveriesQuery,
  response: { 200: ListOf(WebhookDelivery), ...responses },
};
export const getDelivery = {
  tags,
  summary: 'One delivery with its attempt log',
  params: DeliveryParams,
  response: { 200: One(WebhookDeliveryWithAttempts), ...responses },
};
export const replayWebhook = {
  tags,
  summary: 'Replay one delivery ({"delivery_id"}) or every event in a time range ({"from","to"}) as new deliveries',
  params: WebhookIdParams,
  body: ReplayInput,
  response: { 202: One(ReplayResult), ...responses },
};
export const enableWebhook = { tags, summary: 'Re-enable a disabled endpoint', params: WebhookIdParams, response: { 200: One(WebhookEndpoint), ...responses } };
export const rotateSecret = {
  tags,
  summary: 'New signing secret; the old one keeps signing beside it for 24 h',
  params: WebhookIdParams,
  response: { 200: One(WebhookEndpointWithSecret), ...responses },
};

export const testWebhook = {
  tags,
  summary: 'Send a signed test event to the endpoint now',
  description:
    'POSTs one signed event of type `test` (topic `event.test`, `schema` `svc.event.v1`) to the endpoint at once, with the same headers, signature, target checks and timeout as a delivery, outside the retry budget: no delivery is stored and the endpoint\'s health is untouched. Works on a disabled endpoint too. 200 with the attempt\'s outcome whatever the receiver answered.',
  params: WebhookIdParams,
  response: { 200: One(WebhookTestResult), ...responses },
};
