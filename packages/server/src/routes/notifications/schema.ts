import { Type } from '@sinclair/typebox';
import { ListOf, Notification } from '@svc/schema';
import { errorResponses, pageQuery } from '../common.js';

export const listNotifications = {
  tags: ['webhooks'],
  summary: 'Notices for the calling key (e.g. a webhook endpoint was disabled), newest first',
  querystring: Type.Object({ ...pageQuery }, { additionalProperties: false }),
  response: { 200: ListOf(Notification), ...errorResponses },
};
