import { Type, type TSchema } from '@sinclair/typebox';
import { COMPETITION_STATUSES, ErrorBody, SPORTS } from '@svc/schema';

export const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size, 1..1000.' });
export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'The `next_cursor` of the previous page.' });
export const SportParam = Type.Union(SPORTS.map((s) => Type.Literal(s)), { description: 'Sport.' });
export const LeagueParam = Type.String({ pattern: '^[a-z0-9]{1,16}$', description: 'League id, e.g. `wc`.' });
export const SeasonParam = Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'Season id (`wc_2022`) or label (`2022`).' });
export const DateParam = Type.String({ pattern: '^(today|\\d{4}-\\d{2}-\\d{2})$', description: '`today` or YYYY-MM-DD (UTC).' });
export const StatusParam = Type.Union(COMPETITION_STATUSES.map((s) => Type.Literal(s)));
export const TeamIdParam = Type.String({ pattern: '^team:[a-z0-9]{1,16}:[A-Za-z0-9-]{1,64}$', description: 'Team id.' });
export const PlayerIdParam = Type.String({ pattern: '^player:[a-z0-9]{1,16}:[a-z0-9-]{1,128}$', description: 'Player id.' });

export const pageQuery = { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) };

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const errorResponses: Record<number, TSchema> = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
};
