import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { invalid } from '../domain/errors.js';

// TypeBox's compiler knows no formats until told; Fastify's ajv checks the same one.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(v) && !Number.isNaN(Date.parse(v)));
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** `/reports/3/points` → `reports[3].points`: the way a user names the field. */
export function paramOf(path: string): string {
  return path
    .split('/')
    .filter(Boolean)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join('');
}

/**
 * Checks a body against one schema and names the first offending field. Used where a body has
 * alternative shapes (one report or a batch), which a generic union error would not explain.
 */
export function checkBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return value;
  const first = check.Errors(value).First();
  const param = first ? paramOf(first.path) : undefined;
  throw invalid('invalid_field', `${param ? `'${param}'` : 'The body'}: ${first?.message ?? 'does not match the schema'}.`, param || undefined);
}
