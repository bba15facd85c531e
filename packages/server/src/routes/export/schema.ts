import { Type } from '@sinclair/typebox';
import { ENTITIES, type Entity } from '../../export/params.js';
import { LeagueParam, SeasonParam, errorResponses } from '../common.js';

const Bound = (which: string) =>
  Type.String({
    minLength: 1,
    maxLength: 40,
    description: `${which} ISO 8601 date (\`2022-11-20\`, midnight UTC) or date-time (\`2022-11-20T18:00:00Z\`, UTC when no offset), applied to \`ts\` for events and to the competition's \`date\` for plays and competitions.`,
  });

export const ExportQuery = Type.Object(
  {
    league: LeagueParam,
    season: SeasonParam,
    // An enum (not a union of literals) so a wrong value reads "must be equal to one of the allowed values".
    entity: Type.Optional(Type.Unsafe<Entity>({ type: 'string', enum: [...ENTITIES], description: '`events` (default), `plays` or `competitions`.' })),
    from: Type.Optional(Bound('Inclusive lower bound:')),
    to: Type.Optional(Bound('Exclusive upper bound:')),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 120,
        description: 'Resume after this record: the last event id (`evt_…`), play (`<competition_id>:<seq>`) or competition id received.',
      }),
    ),
  },
  { additionalProperties: false },
);

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
