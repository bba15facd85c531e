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

type Validate = ReturnType<Ajv['compile']>;

/**
 * One pair of validators and one compiled function per schema for the process, not per app: the
 * routes' schemas are module-level constants, and compiling them again for every app a process
 * builds (the test suite builds hundreds) is CPU spent for the same functions.
 */
let validators: { text: Ajv; json: Ajv; compiled: { text: WeakMap<object, Validate>; json: WeakMap<object, Validate> } } | undefined;

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  validators ??= { text: ajv('array'), json: ajv(false), compiled: { text: new WeakMap(), json: new WeakMap() } };
  const { compiled, ...instances } = validators;
  return ({ schema, httpPart }) => {
    if (typeof schema !== 'object' || schema === null) throw new Error(`a ${httpPart ?? 'route'} schema must be an object`);
    const medium = httpPart === 'body' ? 'json' : 'text';
    let validate = compiled[medium].get(schema);
    if (validate === undefined) {
      validate = instances[medium].compile(schema);
      compiled[medium].set(schema, validate);
    }
    return validate;
  };
}
