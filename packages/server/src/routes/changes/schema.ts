import { Type } from '@sinclair/typebox';
import { ChangePage, ChangesQuery, ErrorBody } from '@svc/schema';
import { errorResponses } from '../common.js';

export const listChanges = {
  tags: ['changes'],
  summary: 'The change feed: competitions created or updated and events created, in one order',
  description:
    'Every change to a competition (status, score, start time) and every event the key may see, in the order the service made them (the same on every node). ' +
    'Poll with `since` = the last `next_cursor` (always present, even on an empty page) or an export’s `X-Changes-Cursor`; `wait` (0..30 s) holds an empty answer ' +
    'until a change arrives. Without `since` the feed starts at the oldest change kept (30 days by default); a cursor older than that is 410 `cursor_expired` ' +
    '(docs/changes.md). Products: `live` or `archive`.',
  querystring: ChangesQuery,
  response: { 200: ChangePage, 410: ErrorBody, 304: Type.Null({ description: 'Not modified: the body’s ETag matches If-None-Match.' }), ...errorResponses },
};
