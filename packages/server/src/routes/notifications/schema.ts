import { ListOf, Notification, PageQuery } from '@svc/schema';
import { errorResponses } from '../common.js';

export const listNotifications = {
  tags: ['webhooks'],
  summary: 'Notices for the calling key (e.g. a webhook endpoint was disabled), newest first',
  querystring: PageQuery,
  response: { 200: ListOf(Notification), ...errorResponses },
};
