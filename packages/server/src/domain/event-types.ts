import { EVENT_TYPES, type EventType } from '@svc/schema';
import { invalid } from './errors.js';

/**
 * The `types` filter of event reads, the stream and webhook endpoints (docs/schedule.md): a comma
 * list of event types, or absent for every type (null). An unknown name is a 400 naming `param`.
 */
export function parseEventTypes(raw: string | readonly string[] | null | undefined, param = 'types'): EventType[] | null {
  if (raw === null || raw === undefined) return null;
  const names = (typeof raw === 'string' ? raw.split(',') : raw).map((s) => s.trim());
  const out: EventType[] = [];
  for (const name of names) {
    const t = EVENT_TYPES.find((x) => x === name);
    if (!t) throw invalid('invalid_parameter', `'${param}' must list event types among ${EVENT_TYPES.join(', ')}.`, param);
    if (!out.includes(t)) out.push(t);
  }
  if (out.length === 0) throw invalid('invalid_parameter', `'${param}' must name at least one event type.`, param);
  return out;
}
