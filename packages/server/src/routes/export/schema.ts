import { Type } from '@sinclair/typebox';
import { ExportQuery } from '@svc/schema';
import { errorResponses } from '../common.js';

export const exportSchema = {
  tags: ['archive'],
  summary: 'Bulk export of a season as NDJSON (product archive)',
  description: [
    'Streams one record per line, each byte for byte the JSON the REST lists return for it:',
    'events (confirmed, `seq` order) as in `GET /v1/games/{id}/events`, plays ordered by competition date, competition id and `seq`',
    'as in `GET /v1/competitions/{id}/plays`, competitions by date and id as in `GET /v1/competitions`.',
    'Events and plays cover the competitions the archive serves (final, dated before today).',
    'Gzip-encoded when the request sends `Accept-Encoding: gzip`. Interrupted? Pass the last id received as `after`.',
  ].join(' '),
  querystring: ExportQuery,
  response: {
    200: {
      description: 'Newline-delimited JSON, one record per line, streamed.',
      // Unknown rather than String: the body is a stream, never serialised, and the typed reply must accept it.
      content: { 'application/x-ndjson': { schema: Type.Unknown({ description: 'One JSON record per line, each followed by \\n.' }) } },
    },
    ...errorResponses,
  },
};
