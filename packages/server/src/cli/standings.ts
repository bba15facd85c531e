import type { Standings, StandingsRow } from '@svc/schema';
import { localBaseUrl, type Config } from '../config.js';
import { readDemoKey } from '../process/demo-key.js';
import { parseOptions, UsageError } from './usage.js';

export const STANDINGS_USAGE = `usage: svc standings --league L [--season S] [--tier confirmed|provisional] [--final-only] [--url URL] [--key KEY] [--json]
Prints a season's standings as aligned tables, one per group (GET /v1/standings).
  --league      the league, e.g. wc (soccer) or sbl (basketball)
  --season      season label or id, e.g. 2022 (default: the league's current season)
  --tier        which events of live games count (default confirmed)
  --final-only  count finished games only (live=false)
  --url         the service (default from SVC_HOST and SVC_PORT)
  --key         a key with the live or archive product (default $SVC_API_KEY, else the sandbox demo key of SVC_DATA_DIR)
  --json        print the answer as the API sends it`;

export interface StandingsArgs {
  url: string;
  key: string;
  league: string;
  season: string | undefined;
  tier: 'confirmed' | 'provisional' | undefined;
  finalOnly: boolean;
  json: boolean;
}

export function parseStandingsArgs(argv: string[], config: Config, env: Record<string, string | undefined>): StandingsArgs {
  const { values } = parseOptions(argv, {
    league: { type: 'string' },
    season: { type: 'string' },
    tier: { type: 'string' },
    'final-only': { type: 'boolean', default: false },
    url: { type: 'string' },
    key: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (!values.league) throw new UsageError('--league is required, e.g. svc standings --league wc --season 2022');
  const tier = values.tier;
  if (tier !== undefined && tier !== 'confirmed' && tier !== 'provisional') throw new UsageError(`--tier must be confirmed or provisional, got '${tier}'`);
  const url = (values.url ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new UsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const key = values.key ?? env.SVC_API_KEY ?? readDemoKey(config);
  if (!key) throw new UsageError('no key: pass --key, set SVC_API_KEY, or start the sandbox once (npm start) to create its demo key');
  return { url, key, league: values.league, season: values.season, tier, finalOnly: values['final-only'] ?? false, json: values.json ?? false };
}

type Cell = string | number;

/** Columns of text, the first left-aligned and the rest right-aligned, each as wide as its widest cell. */
export function alignColumns(rows: Cell[][], leftAligned = 2): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, String(c).length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i < leftAligned ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

const signed = (n: number): string => (n > 0 ? `+${n}` : String(n));

/** The tables as a person reads them in a terminal; `names` turns entity ids into names. */
export function formatStandings(body: Standings, names: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  const soccer = body.data.some((t) => t.rows.some((r) => r.points !== undefined));
  let anyLive = false;
  for (const table of body.data) {
    const header: Cell[] = soccer ? ['#', table.group ?? 'Table', 'P', 'W', 'D', 'L', 'GF', 'GA', 'GD', 'Pts'] : ['#', table.group ?? 'Table', 'P', 'W', 'L', 'PF', 'PA', 'Diff', 'Pct', 'GB'];
    const rows: Cell[][] = table.rows.map((r: StandingsRow) => {
      if (r.live) anyLive = true;
      const name = `${names.get(r.entity_id) ?? r.entity_id}${r.live ? ' *' : ''}`;
      return soccer
        ? [r.rank, name, r.played, r.won, r.drawn ?? 0, r.lost, r.scored, r.conceded, signed(r.diff), r.points ?? 0]
        : [r.rank, name, r.played, r.won, r.lost, r.scored, r.conceded, signed(r.diff), (r.pct ?? 0).toFixed(3), r.games_behind === 0 ? '-' : (r.games_behind ?? 0).toFixed(1)];
    });
    if (out.length > 0) out.push('');
    out.push(...alignColumns([header, ...rows]));
  }
  out.push('');
  if (anyLive) out.push('* a game in progress, counted at its current score');
  out.push(`as of ${body.as_of}`);
  return `${out.join('\n')}\n`;
}

type Out = { write(s: string): unknown };

async function getJson(args: StandingsArgs, path: string): Promise<{ ok: true; body: unknown } | { ok: false; line: string }> {
  let res: Response;
  try {
    res = await fetch(`${args.url}${path}`, { headers: { authorization: `Bearer ${args.key}` } });
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
  if (typeof err === 'object' && err !== null && 'code' in err && 'message' in err) return { ok: false, line: `${res.status} ${String(err.code)}: ${String(err.message)}` };
  return { ok: false, line: `${res.status} ${text.slice(0, 200)}` };
}

function isStandings(v: unknown): v is Standings {
  return typeof v === 'object' && v !== null && 'data' in v && 'as_of' in v && Array.isArray(v.data) && typeof v.as_of === 'string';
}

function isTeamPage(v: unknown): v is { data: { id: string; name: string }[]; next_cursor: string | null } {
  if (typeof v !== 'object' || v === null || !('data' in v) || !('next_cursor' in v) || !Array.isArray(v.data)) return false;
  const cursor: unknown = v.next_cursor;
  const rows: unknown[] = v.data;
  return (cursor === null || typeof cursor === 'string') && rows.every((t) => typeof t === 'object' && t !== null && 'id' in t && 'name' in t && typeof t.id === 'string' && typeof t.name === 'string');
}

/** Team names of the league, for the tables (ids stay when a name is missing). */
async function teamNames(args: StandingsArgs): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ league: args.league, limit: '1000', ...(cursor ? { cursor } : {}) });
    const page = await getJson(args, `/v1/teams?${q}`);
    if (!page.ok || !isTeamPage(page.body)) break;
    for (const t of page.body.data) names.set(t.id, t.name);
    cursor = page.body.next_cursor;
  } while (cursor);
  return names;
}

export async function standingsCommand(args: StandingsArgs, stdout: Out, stderr: Out): Promise<number> {
  const q = new URLSearchParams({ league: args.league });
  if (args.season !== undefined) q.set('season', args.season);
  if (args.tier !== undefined) q.set('tier', args.tier);
  if (args.finalOnly) q.set('live', 'false');
  const res = await getJson(args, `/v1/standings?${q}`);
  if (!res.ok) {
    stderr.write(`svc standings: ${res.line}\n`);
    return 1;
  }
  if (!isStandings(res.body)) {
    stderr.write('svc standings: the answer is not a standings body\n');
    return 1;
  }
  if (args.json) {
    stdout.write(`${JSON.stringify(res.body)}\n`);
    return 0;
  }
  stdout.write(formatStandings(res.body, await teamNames(args)));
  return 0;
}
