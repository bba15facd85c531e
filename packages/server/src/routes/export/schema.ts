import { Type } from '@sinclair/typebox';
import { ExportQuery } from '@svc/schema';
import { errorResponses } from '../common.js';

export const exportSchema = {
  tags: ['archive'],
  summary: 'Bulk export of a season as NDJSON, CSV or Parquet (product archive)',
  description: [
    'Streams one record per line, each byte for byte the JSON the REST lists return for it:',
    'events (confirmed, `seq` order) as in `GET /v1/games/{id}/events`, plays ordered by competition date, competition id and `seq`',
    'as in `GET /v1/competitions/{id}/plays`, competitions by date and id as in `GET /v1/competitions`.',
    'Events and plays cover the competitions the archive serves (final, dated before today).',
    'Gzip-encoded when the request sends `Accept-Encoding: gzip` (NDJSON and CSV). Interrupted? Pass the last id received as `after`.',
    '`format=csv`: RFC 4180 with a header row, nested fields as dotted columns (`confidence.agreement`), arrays and maps as JSON, null an empty field; a text cell starting with `=`, `+`, `-`, `@`, a tab or CR (and not a plain number) gets a leading single quote, so a spreadsheet never runs it as a formula.',
    '`format=parquet`: the same columns typed (integers, `ts`/`start_time` as UTC timestamps, `date` as DATE), written in row groups; DuckDB, pandas and polars read it directly.',
    'Both are made from the NDJSON lines: the same rows, in the same order, with the same values.',
  ].join(' '),
  querystring: ExportQuery,
  response: {
    200: {
      description: 'Newline-delimited JSON, one record per line, streamed.',
      // Unknown rather than String: the body is a stream, never serialised, and the typed reply must accept it.
      content: {
        'application/x-ndjson': { schema: Type.Unknown({ description: 'One JSON record per line, each followed by \\n.' }) },
        'text/csv': { schema: Type.Unsafe<string>({ type: 'string', description: 'RFC 4180 CSV (CRLF line ends) with a header row; `format=csv`.' }) },
        'application/vnd.apache.parquet': { schema: Type.Unsafe<string>({ type: 'string', format: 'binary', description: 'An Apache Parquet file; `format=parquet`.' }) },
      },
    },
    ...errorResponses,
  },
};
