import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { invalid } from '../domain/errors.js';

// TypeBox's compiler knows no formats until told; Fastify's ajv checks the same one.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);

const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?(?:Z|[+-](\d\d):(\d\d))$/i;

/**
 * An RFC 3339 date-time that names a real instant. Date.parse alone rolls 2022-02-30 over to
 * March 2nd, so the calendar is checked field by field.
 */
export function isDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (!m) return false;
  const [year, month, day, hour, minute, second = '0', offH = '0', offM = '0'] = m.slice(1);
  const y = Number(year);
  const mo = Number(month);
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return (
    mo >= 1 && mo <= 12 && Number(day) >= 1 && Number(day) <= daysInMonth &&
    Number(hour) <= 23 && Number(minute) <= 59 && Number(second) <= 59 &&
    Number(offH) <= 23 && Number(offM) <= 59 && !Number.isNaN(Date.parse(v))
  );
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
