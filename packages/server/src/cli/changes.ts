import { localBaseUrl, type Config } from '../config.js';
import { readDemoKey } from '../process/demo-key.js';
import { parseOptions, UsageError } from './usage.js';

export const CHANGES_USAGE = `usage: svc changes [--follow] [--since CURSOR] [--types competition.updated,event.created] [--url http://127.0.0.1:8080] [--key KEY] [--json]
Prints the change feed (GET /v1/changes, docs/changes.md): competitions created or updated and
events created, oldest first, from the oldest change kept or from --since. Without --follow it
stops at the feed's present end; with --follow it long-polls for ever (Ctrl-C stops). The cursor
to resume from goes to stderr as it moves ("cursor <…>").
  --follow    keep polling for new changes (long polls of 25 s)
  --since     a cursor: a next_cursor printed earlier, or an export's X-Changes-Cursor
  --types     comma list: competition.created, competition.updated, event.created
  --url       the service (default from SVC_HOST and SVC_PORT)
  --key       a key with the live or archive product (default $SVC_API_KEY, else the sandbox demo key of SVC_DATA_DIR)
  --json      one change per line as the API returns it`;

export interface ChangesArgs {
  url: string;
  key: string;
  follow: boolean;
  since: string | undefined;
  types: string | undefined;
  json: boolean;
}

export function parseChangesArgs(argv: string[], config: Config, env: Record<string, string | undefined>): ChangesArgs {
  const { values } = parseOptions(argv, {
    follow: { type: 'boolean', default: false },
    since: { type: 'string' },
    types: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (values.types !== undefined && !/^(competition\.created|competition\.updated|event\.created)(,(competition\.created|competition\.updated|event\.created))*$/.test(values.types)) {
    throw new UsageError(`--types must list competition.created, competition.updated or event.created, got '${values.types}'`);
  }
  const url = (values.url ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new UsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const key = values.key ?? env.SVC_API_KEY ?? readDemoKey(config);
  if (!key) throw new UsageError('no key: pass --key, set SVC_API_KEY, or start the sandbox once (npm start) to create its demo key');
  return { url, key, follow: values.follow ?? false, since: values.since, types: values.types, json: values.json ?? false };
}

interface ChangeLine {
  id: string;
  type: string;
  object_id: string;
  at: string;
  object: Record<string, unknown>;
}

/** One line per change: when, what, which, and the gist of the object. */
export function formatChange(c: ChangeLine): string {
  const o = c.object;
  let gist = '';
  if (c.type === 'event.created' && o.type === 'status') gist = `${String(o.game_id)} ${String(o.previous_status)} → ${String(o.status)}${o.reason ? ` (${String(o.reason)})` : ''}`;
  else if (c.type === 'event.created') gist = `${String(o.game_id)} ${String(o.tier)} ${String(o.type)} ${String(o.team ?? '')} +${String(o.points ?? '')}`;
  else gist = `${String(o.status)}${o.start_time ? `, starts ${String(o.start_time)}` : ''}`;
  return `${c.at.slice(0, 19)}  ${c.type.padEnd(20)} ${c.object_id.padEnd(22)} ${gist}  (${c.id})`;
}

type Out = { write(s: string): unknown };

/** `svc changes`: exit 0 at the feed's end (or on Ctrl-C with --follow), 1 when the service refuses. */
export async function changesCommand(args: ChangesArgs, out: Out, err: Out, signal?: AbortSignal): Promise<number> {
  let since = args.since;
  const wait = args.follow ? 25 : 0;
  for (;;) {
    if (signal?.aborted) return 0;
    const q = new URLSearchParams({ limit: '1000', wait: String(wait) });
    if (since) q.set('since', since);
    if (args.types) q.set('types', args.types);
    let res: Response;
    try {
      res = await fetch(`${args.url}/v1/changes?${q}`, { headers: { authorization: `Bearer ${args.key}` }, signal });
    } catch {
      if (signal?.aborted) return 0;
      if (!args.follow) {
        err.write(`svc changes: no svc service at ${args.url}\n`);
        return 1;
      }
      // Following: the service may be restarting; try again shortly from the same cursor.
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const e = typeof body === 'object' && body !== null && 'error' in body ? (body as { error: { code?: string; message?: string } }).error : null;
      err.write(`svc changes: ${res.status} ${e?.code ?? ''}: ${e?.message ?? 'the service refused'}\n`);
      return 1;
    }
    const page = body as { data: ChangeLine[]; next_cursor: string };
    for (const c of page.data) out.write(`${args.json ? JSON.stringify(c) : formatChange(c)}\n`);
    if (page.next_cursor !== since) err.write(`cursor ${page.next_cursor}\n`);
    since = page.next_cursor;
    if (page.data.length === 0 && !args.follow) return 0;
  }
}
