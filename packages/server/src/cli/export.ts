import fs from 'node:fs';
import { localBaseUrl, type Config } from '../config.js';
import { ENTITIES, type Entity } from '../export/params.js';
import { download, ExportHttpError } from './export-download.js';
import { ResumeError, resumePoint } from './export-resume.js';
import { fmtBytes, Progress } from './progress.js';
import { EXPORT_FORMATS, type ExportFormat } from '@svc/schema';

export const EXPORT_USAGE =
  'usage: svc export --league wc --season 2022 [--entity events|plays|competitions] [--format ndjson|csv|parquet]\n' +
  '                  [--from ISO8601] [--to ISO8601] [--out|-o FILE|-] [--url http://127.0.0.1:8080] [--key KEY (default $SVC_API_KEY)]\n' +
  '                  [--after ID] [--no-gzip]\n' +
  'An existing NDJSON --out file is resumed after its last complete line unless --after is given; a CSV or\n' +
  'Parquet file is written whole (to FILE.part, renamed when complete).';

export class ExportUsageError extends Error {}

export interface ExportArgs {
  league: string;
  season: string;
  entity: Entity;
  format: ExportFormat;
  from?: string;
  to?: string;
  after?: string;
  /** '-' writes to stdout. */
  out: string;
  url: string;
  key: string;
  gzip: boolean;
}

const VALUE_FLAGS = ['--league', '--season', '--entity', '--format', '--from', '--to', '--after', '--out', '--url', '--key'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

export function parseExportArgs(argv: string[], config: Pick<Config, 'host' | 'port'>, env: Record<string, string | undefined>): ExportArgs {
  const v: Partial<Record<ValueFlag, string>> = {};
  let gzip = true;
  for (let i = 0; i < argv.length; i++) {
    const [given, inline] = argv[i].split(/=(.*)/s, 2);
    const flag = given === '-o' ? '--out' : given;
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
  const format = EXPORT_FORMATS.find((f) => f === (v['--format'] ?? 'ndjson'));
  if (!format) throw new ExportUsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
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
    format,
    from: v['--from'],
    to: v['--to'],
    after: v['--after'],
    out: v['--out'] ?? `${league}_${label}_${entity}.${format}`,
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
  if (a.format !== 'ndjson') return runFileExport(a, stderr, signal);
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

/**
 * A CSV or Parquet export: not resumable part-way (a Parquet file's index is its footer), so it is
 * written to `<out>.part` and renamed only once complete; an interrupted run leaves no file that
 * looks finished. Progress counts bytes.
 */
async function runFileExport(a: ExportArgs, stderr: { write(s: string): unknown; isTTY?: boolean }, signal?: AbortSignal): Promise<ExportResult> {
  const query: Record<string, string> = { league: a.league, season: a.season, entity: a.entity, format: a.format };
  if (a.from) query.from = a.from;
  if (a.to) query.to = a.to;
  if (a.after) query.after = a.after;
  const progress = new Progress(stderr, undefined);
  const part = a.out === '-' ? null : `${a.out}.part`;
  await download({ baseUrl: a.url, key: a.key, query, out: part ? { file: part, append: false } : null, gzip: a.gzip, progress, lines: false, signal });
  if (part) fs.renameSync(part, a.out);
  progress.draw(true);
  return { ...progress.counts };
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
    const what = args.format === 'ndjson' ? `${r.records.toLocaleString('en-US')} records (${fmtBytes(r.bytes)})` : `${args.format.toUpperCase()} file, ${fmtBytes(r.bytes)},`;
    stderr.write(`svc export: ${what} written to ${args.out === '-' ? 'stdout' : args.out}\n`);
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
