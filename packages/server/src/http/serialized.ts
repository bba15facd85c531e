import type { FastifyReply } from 'fastify';

/**
 * Sends `body`, which is already the JSON of a 200 answer (a response-cache hit, or a page made
 * by the serializer the route's schema compiles to, as store/reference/settled-days.ts does): Fastify sends
 * a string with a JSON content type as it is. Typed as any reply, since a schema-typed `send`
 * takes only the record form.
 */
export function sendSerialized(reply: FastifyReply, body: string): void {
  reply.code(200).type('application/json; charset=utf-8').send(body);
}
