import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
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

/**
 * Sends `body`, which is already the route's JSON for a 200 (made by the serializer the route's
 * schema compiles to, as store/settled-days.ts does): Fastify sends a string with a JSON content
 * type as it is. Typed as any reply, since the schema-typed `send` takes only the record form.
 */
export function sendSerialized(reply: FastifyReply, body: string): void {
  reply.code(200).type('application/json; charset=utf-8').send(body);
}
