import { ListOf, One, Reporter } from '@svc/schema';
import { Value } from '@sinclair/typebox/value';
import { localBaseUrl, type Config } from '../config.js';
import { readDemoKey } from '../process/demo-key.js';
import { cellWidth, padCell, padCellStart, printable } from './cells.js';
import { isReportersSubcommand, type ReportersSubcommand } from './reporters-usage.js';
import { parseOptions, UsageError } from './usage.js';

export interface ReportersArgs {
  sub: ReportersSubcommand;
  url: string;
  key: string;
  json: boolean;
  /** list: the query; suspend and restore: the reporter's id. */
  query: URLSearchParams;
  id: string;
}

const connection = { url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean', default: false } } as const;

export function parseReportersArgs(argv: string[], config: Config, env: Record<string, string | undefined>): ReportersArgs {
  const [sub, ...rest] = argv;
  if (!isReportersSubcommand(sub)) throw new UsageError(sub === undefined ? 'which subcommand? list, suspend or restore' : `unknown subcommand '${sub}' (list, suspend or restore)`);
  const query = new URLSearchParams();
  let id = '';
  let values: { url?: string; key?: string; json?: boolean };
  if (sub === 'list') {
    const parsed = parseOptions(rest, { ...connection, 'key-id': { type: 'string' }, flagged: { type: 'boolean', default: false }, suspended: { type: 'boolean', default: false } });
    values = parsed.values;
    const keyId = parsed.values['key-id'];
    if (keyId !== undefined) {
      if (!/^key_[A-Za-z0-9]{1,64}$/.test(keyId)) throw new UsageError(`--key-id must be a key id like key_…, got '${keyId}'`);
      query.set('key', keyId);
    }
    if (parsed.values.flagged) query.set('flagged', 'true');
    if (parsed.values.suspended) query.set('suspended', 'true');
  } else {
    const parsed = parseOptions(rest, connection, 1);
    values = parsed.values;
    id = parsed.positionals[0] ?? '';
    if (!id) throw new UsageError(`which reporter? svc reporters ${sub} REPORTER_ID`);
    if (!id.startsWith('rep_')) throw new UsageError(`a reporter id starts with rep_, got '${id}'`);
  }
  const url = (values.url ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new UsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const key = values.key ?? env.SVC_API_KEY ?? readDemoKey(config);
  if (!key) throw new UsageError('no key: pass --key or set SVC_API_KEY to a key with the admin product (svc keys create --name ops --products admin)');
  return { sub, url, key, json: values.json ?? false, query, id };
}

type Out = { write(s: string): unknown };

/** One call to the service: its JSON, or the line that says why not. */
async function call(args: ReportersArgs, method: 'GET' | 'POST', path: string): Promise<{ ok: true; body: unknown } | { ok: false; line: string }> {
  let res: Response;
  try {
    res = await fetch(`${args.url}${path}`, { method, headers: { authorization: `Bearer ${args.key}` } });
  } catch {
    return { ok: false, line: `no svc service at ${args.url}` };
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the service's JSON: reported with the status below.
  }
  if (res.ok) return { ok: true, body };
  const err: unknown = typeof body === 'object' && body !== null && 'error' in body ? body.error : undefined;
  if (typeof err === 'object' && err !== null && 'code' in err && 'message' in err) {
    const hint = err.code === 'product_not_in_plan' ? ' (a key with the admin product: svc keys create --name ops --products admin)' : '';
    return { ok: false, line: `${res.status} ${String(err.code)}: ${String(err.message)}${hint}` };
  }
  return { ok: false, line: `${res.status} ${text.slice(0, 200)}` };
}

/** Flagged first, then the API's order (by key, its own voice before its named reporters). */
export function reportersTable(reporters: Reporter[]): string {
  if (reporters.length === 0) return 'No reporters match.';
  const ordered = [...reporters.filter((r) => r.flagged), ...reporters.filter((r) => !r.flagged)];
  const cells = ordered.map((r) => [
    r.id,
    r.key_id,
    // A name is whatever the key sent (docs/reporters.md): one printable cell.
    r.reporter === null ? '(key)' : printable(r.reporter),
    r.weight.toFixed(3),
    String(r.reports),
    String(r.agreed),
    String(r.disagreed),
    String(r.official_confirmed),
    String(r.official_contradicted),
    r.flagged ? 'flagged' : '-',
    r.suspended ? 'suspended' : 'active',
    r.last_report_at ?? '-',
  ]);
  const header = ['ID', 'KEY', 'REPORTER', 'WEIGHT', 'REPORTS', 'AGREED', 'DISAGREED', 'OFFICIAL+', 'OFFICIAL-', 'FLAG', 'STATUS', 'LAST REPORT'];
  // Counts read best right-aligned; the table() of keys pads every column on the right.
  const numeric = new Set([3, 4, 5, 6, 7, 8]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => cellWidth(c[i]))));
  const line = (row: string[]) =>
    row
      .map((c, i) => (numeric.has(i) ? padCellStart(c, widths[i]) : i === row.length - 1 ? c : padCell(c, widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

/** `svc reporters list|suspend|restore`: exit 0, or 1 with the service's error on stderr. */
export async function reportersCommand(args: ReportersArgs, stdout: Out, stderr: Out): Promise<number> {
  const name = `svc reporters ${args.sub}`;
  if (args.sub === 'list') {
    const all: Reporter[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams(args.query);
      q.set('limit', '1000');
      if (cursor) q.set('cursor', cursor);
      const res = await call(args, 'GET', `/v1/reporters?${q}`);
      if (!res.ok) {
        stderr.write(`${name}: ${res.line}\n`);
        return 1;
      }
      if (!Value.Check(ListOf(Reporter), res.body)) {
        stderr.write(`${name}: the answer is not a page of reporters\n`);
        return 1;
      }
      all.push(...res.body.data);
      cursor = res.body.next_cursor;
    } while (cursor);
    stdout.write(`${args.json ? JSON.stringify(all) : reportersTable(all)}\n`);
    return 0;
  }
  const res = await call(args, 'POST', `/v1/reporters/${encodeURIComponent(args.id)}/${args.sub}`);
  if (!res.ok) {
    stderr.write(`${name}: ${res.line}\n`);
    return 1;
  }
  if (!Value.Check(One(Reporter), res.body)) {
    stderr.write(`${name}: the answer is not a reporter\n`);
    return 1;
  }
  const r = res.body.data;
  if (args.json) stdout.write(`${JSON.stringify(r)}\n`);
  else stdout.write(`${args.sub === 'suspend' ? 'Suspended' : 'Restored'} ${r.id} (${r.key_id}${r.reporter === null ? '' : ` / ${printable(r.reporter)}`}): ${r.suspended ? 'its reports count for nothing' : 'its reports count again'}.\n`);
  return 0;
}
