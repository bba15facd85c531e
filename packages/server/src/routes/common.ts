import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from '@svc/schema';

export { Cursor, DateParam, LeagueParam, Limit, PlayerIdParam, SeasonParam, SportParam, StatusParam, TeamIdParam, pageQuery } from '@svc/schema';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const errorResponses: Record<number, TSchema> = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
};
