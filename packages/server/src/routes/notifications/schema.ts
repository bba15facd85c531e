import { Type } from '@sinclair/typebox';
import { ListOf } from '@svc/schema';
import { errorResponses, pageQuery } from '../common.js';

export const Notification = Type.Object(
  {
    id: Type.String({ description: 'ntf_…' }),
    type: Type.String({ description: 'e.g. `webhook_endpoint.disabled`' }),
    endpoint_id: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    message: Type.String(),
    created_at: Type.String(),
  },
  { $id: 'Notification', additionalProperties: false },
);

export const listNotifications = {
  tags: ['webhooks'],
  summary: 'Notices for the calling key (e.g. a webhook endpoint was disabled), newest first',
  querystring: Type.Object({ ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Notification), ...errorResponses },
};
