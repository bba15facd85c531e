import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

/**
 * The response serializers, compiled once per response schema for the process rather than once
 * per app. Compiling them is most of what building an app costs (about half a CPU-second for
 * every route's responses), and a process that builds several apps over the same route schemas
 * (the test suite builds hundreds) would pay it each time; within one app, routes that share a
 * response schema compile it once. The routes' schemas are module-level constants and the app
 * registers no shared schemas, so a schema object compiles to the same function whoever asks
 * (docs/testing.md, "What makes it fast").
 */
type Serializer = (data: unknown) => string;

const compiled = new WeakMap<object, Serializer>();

export function serializerCompiler(): FastifySerializerCompiler<unknown> {
  return ({ schema }) => {
    if (typeof schema !== 'object' || schema === null) throw new Error('a response schema must be an object');
    let serialize = compiled.get(schema);
    if (serialize === undefined) {
      serialize = fastJson(schema);
      compiled.set(schema, serialize);
    }
    return serialize;
  };
}
