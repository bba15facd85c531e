import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators, because the query and the body are different media. A query string is text, so
 * `limit=10` must be read as a number (and `tag=a` as a one-item list). A JSON body already has
 * types: `"points": "2"`, `"points": [2]` or `"sports": "soccer"` are mistakes to name, and
 * Fastify's single coercing validator used to turn them silently into 2, 2 and ["soccer"].
 */
const BASE: Options = { removeAdditional: false, useDefaults: true, allErrors: false, addUsedSchema: false };

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsModule.default;

function ajv(coerceTypes: Options['coerceTypes']): Ajv {
  const instance = new Ajv({ ...BASE, coerceTypes });
  addFormats(instance);
  return instance;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const text = ajv('array');
  const json = ajv(false);
  return ({ schema, httpPart }) => {
    if (typeof schema !== 'object' || schema === null) throw new Error(`a ${httpPart ?? 'route'} schema must be an object`);
    return (httpPart === 'body' ? json : text).compile(schema);
  };
}
