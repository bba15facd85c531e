import fs from 'node:fs';
import type { Config } from '../config.js';
import { ENTITIES, type Entity } from '../export/params.js';
import { localBaseUrl } from '../sim/cli.js';
import { download, ExportHttpError } from './export-download.js';
import { ResumeError, resumePoint } from './export-resume.js';
import { fmtBytes, Progress } from './progress.js';

export const EXPORT_USAGE =
  'usage: svc export --league wc --season 2022 [--entity events|plays|competitions] [--from ISO8601] [--to ISO8601]\n' +
  '                  [--out FILE|-] [--url http://127.0.0.1:8080] [--key KEY (default $SVC_API_KEY)] [--after ID] [--no-gzip]\n' +
  'An existing --out file is resumed after its last complete line unless --after is given.';

export class ExportUsageError extends Error {}

export interface ExportArgs {
  league: string;
  season: string;
  entity: Entity;
  from?: string;
  to?: string;
  after?: string;
  /** '-' writes to stdout. */
  out: string;
  url: string;
  key: string;
  gzip: boolean;
}

const VALUE_FLAGS = ['--league', '--season', '--entity', '--from', '--to', '--after', '--out', '--url', '--key'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

export function parseExportArgs(argv: string[], config: Pick<Config, 'host' | 'port'>, env: Record<string, string | undefined>): ExportArgs {
  const v: Partial<Record<ValueFlag, string>> = {};
  let gzip = true;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === '--no-gzip') {
      gzip = false;
      continue;
    }
    const known = VALUE_FLAGS.find((f) => f === flag);
    if (!known) throw new ExportUsageError(`unknown option '${flag}'`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ExportUsageError(`${flag} needs a value`);
    v[known] = value;
  }
  if (!v['--league'] || !v['--season']) throw new ExportUsageError('--league and --season are required');
  const entity = ENTITIES.find((e) => e === (v['--entity'] ?? 'events'));
  if (!entity) throw new ExportUsageError(`--entity must be one of ${ENTITIES.join(', ')}`);
  const key = v['--key'] ?? env.SVC_API_KEY;
  if (!key) throw new ExportUsageError('pass --key or set SVC_API_KEY');
  const url = (v['--url'] ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new ExportUsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const league = v['--league'];
  const season = v['--season'];
  const label = season.startsWith(`${league}_`) ? season.slice(league.length + 1) : season;
  return {
    league,
    season,
    entity,
    from: v['--from'],
    to: v['--to'],
    after: v['--after'],
    out: v['--out'] ?? `${league}_${label}_${entity}.ndjson`,
    url,
    key,
    gzip,
  };
}

/** The season's record count from GET /v1/seasons, for the progress bar; unknown is fine. */
async function expectedTotal(a: ExportArgs): Promise<number | undefined> {
  if (a.entity === 'plays' || a.from || a.to || a.after) return undefined;
  try {
    const res = await fetch(`${a.url}/v1/seasons?league=${encodeURIComponent(a.league)}&limit=1000`, { headers: { authorization: `Bearer ${a.key}` } });
    if (!res.ok) return undefined;
    const body: { data?: { id: string; label: string; events: number; competitions: number }[] } = await res.json();
    const s = body.data?.find((x) => x.id === a.season || x.label === a.season);
    return s ? (a.entity === 'events' ? s.events : s.competitions) : undefined;
  } catch {
    return undefined;
  }
}

export interface ExportResult {
  records: number;
  bytes: number;
  resumedAfter?: string;
}

/** Downloads one export into `out`, resuming an existing file after its last complete line. */
export async function runExport(a: ExportArgs, stderr: { write(s: string): unknown; isTTY?: boolean }, signal?: AbortSignal): Promise<ExportResult> {
  let after = a.after;
  let append = false;
  if (a.out !== '-' && a.after === undefined && fs.existsSync(a.out)) {
    const point = await resumePoint(a.out, a.entity);
    after = point.after;
    append = point.keptBytes > 0;
    if (after) stderr.write(`svc export: ${a.out} exists; resuming after ${after} (${fmtBytes(point.keptBytes)} kept)\n`);
  }
  const query: Record<string, string> = { league: a.league, season: a.season, entity: a.entity };
  if (a.from) query.from = a.from;
  if (a.to) query.to = a.to;
  if (after) query.after = after;
  const progress = new Progress(stderr, after ? undefined : await expectedTotal(a));
  await download({ baseUrl: a.url, key: a.key, query, out: a.out === '-' ? null : { file: a.out, append }, gzip: a.gzip, progress, signal });
  progress.draw(true);
  return { ...progress.counts, resumedAfter: after };
}

/** `svc export …`: exit 0 when complete, 1 when interrupted or refused, 2 on a usage error. */
export async function exportCommand(argv: string[], config: Pick<Config, 'host' | 'port'>, env: Record<string, string | undefined> = process.env): Promise<number> {
  const stderr = process.stderr;
  let args: ExportArgs;
  try {
    args = parseExportArgs(argv, config, env);
  } catch (e) {
    if (e instanceof ExportUsageError) {
      stderr.write(`svc export: ${e.message} (see svc export --help)\n`);
      return 2;
    }
    throw e;
  }
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  try {
    const r = await runExport(args, stderr, abort.signal);
    stderr.write(`svc export: ${r.records.toLocaleString('en-US')} records (${fmtBytes(r.bytes)}) written to ${args.out === '-' ? 'stdout' : args.out}\n`);
    return 0;
  } catch (e) {
    if (e instanceof ExportHttpError) stderr.write(`\nsvc export: refused (HTTP ${e.status}) ${e.message}\n`);
    else if (e instanceof ResumeError) stderr.write(`\nsvc export: ${e.message}\n`);
    else {
      const why = abort.signal.aborted ? 'interrupted' : `failed: ${e instanceof Error ? e.message : String(e)}`;
      stderr.write(`\nsvc export: ${why}${args.out !== '-' ? `; run the same command again to resume ${args.out}` : ''}\n`);
    }
    return 1;
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}
