import { localBaseUrl, type Config } from '../config.js';
import { readDemoKey } from '../process/demo-key.js';
import { openEventStream, StreamRefusedError, type EventStream, type StreamEvent, type StreamNotice } from './event-stream.js';
import { parseOptions, UsageError } from './usage.js';

export const TAIL_USAGE = `usage: svc tail [--sport soccer,basketball] [--league wc] [--game soccer_1] [--tier provisional|confirmed]
                [--types score,status] [--since evt_…] [--url http://127.0.0.1:8080] [--key KEY] [--json]
Prints live events from the stream as they happen, until Ctrl-C.
  --sport, --league, --game   comma lists; a union (default: every sport the key may read)
  --tier      only provisional or only confirmed events
  --types     only these event types (score, score_retracted, status)
  --since     replay from after this event id, then live
  --url       the service (default from SVC_HOST and SVC_PORT)
  --key       API key with the live product (default $SVC_API_KEY, else the sandbox demo key of SVC_DATA_DIR)
  --json      one event per line as the stream sends it`;

export interface TailArgs {
  url: string;
  key: string;
  query: Record<string, string>;
  json: boolean;
}

export function parseTailArgs(argv: string[], config: Config, env: Record<string, string | undefined>): TailArgs {
  const { values } = parseOptions(argv, {
    sport: { type: 'string' },
    league: { type: 'string' },
    game: { type: 'string' },
    tier: { type: 'string' },
    types: { type: 'string' },
    since: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (values.tier !== undefined && values.tier !== 'provisional' && values.tier !== 'confirmed') throw new UsageError(`--tier must be provisional or confirmed, got '${values.tier}'`);
  if (values.since !== undefined && !/^evt_\w+$/.test(values.since)) throw new UsageError(`--since must be an event id (evt_…), got '${values.since}'`);
  const url = (values.url ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new UsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const key = values.key ?? env.SVC_API_KEY ?? readDemoKey(config);
  if (!key) throw new UsageError('no key: pass --key, set SVC_API_KEY, or start the sandbox once (npm start) to create its demo key');
  const query: Record<string, string> = {};
  for (const name of ['sport', 'league', 'game', 'tier', 'types', 'since'] as const) {
    const v = values[name];
    if (v !== undefined) query[name] = v;
  }
  return { url, key, query, json: values.json ?? false };
}

/** One line per event: when, game, what, and how sure. */
export function formatEvent(e: StreamEvent): string {
  const time = e.ts.slice(11, 19);
  const tier = e.tier === 'confirmed' ? 'CONFIRMED  ' : 'provisional';
  if (e.type === 'status') {
    const start = e.start_time ? `, starts ${e.start_time}` : '';
    return `${time}  ${e.game_id.padEnd(14)} STATUS       ${e.previous_status} → ${e.status}${e.reason ? ` (${e.reason})` : ''}${start}  (${e.id})`;
  }
  // A confirmed retraction corrects a confirmed score (docs/corrections.md); a provisional one withdraws a provisional.
  if (e.type === 'score_retracted' && e.tier === 'confirmed') return `${time}  ${e.game_id.padEnd(14)} ${tier}  ${e.team} -${e.points} withdrawn  (corrects ${e.retracted_id ?? ''}, ${e.id})`;
  if (e.type === 'score_retracted') return `${time}  ${e.game_id.padEnd(14)} ${tier}  retracted ${e.retracted_id ?? ''}`;
  const c = e.confidence;
  return `${time}  ${e.game_id.padEnd(14)} ${tier}  ${e.team} +${e.points}  (agreement ${c.agreement.toFixed(2)}, ${c.reporters} reporter${c.reporters === 1 ? '' : 's'}, ${e.id})`;
}

function noticeLine(n: StreamNotice): string {
  if (n.kind === 'subscribed') {
    const f = n.frame;
    const list = (k: string) => (Array.isArray(f[k]) && f[k].length > 0 ? `${k} ${f[k].join(',')}` : null);
    const what = [list('sports'), list('leagues'), list('games')].filter(Boolean).join('; ') || 'everything the key may read';
    return `svc tail: subscribed to ${what}${typeof f.tier === 'string' ? ` (${f.tier} only)` : ''}; waiting for events (Ctrl-C stops)`;
  }
  if (n.kind === 'error') return `svc tail: ${String(n.frame.code)}: ${String(n.frame.message)}`;
  return `svc tail: connection closed (${n.code}); resuming in ${n.inMs} ms`;
}

/** `svc tail`: exit 0 on Ctrl-C, 1 when the service refuses the stream. */
export async function tailCommand(args: TailArgs, out: { write(s: string): unknown }, err: { write(s: string): unknown }): Promise<number> {
  const stream: EventStream = openEventStream({ baseUrl: args.url, apiKey: args.key, query: args.query, onNotice: (n) => err.write(`${noticeLine(n)}\n`) });
  const stop = () => stream.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for await (const e of stream) out.write(`${args.json ? JSON.stringify(e) : formatEvent(e)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof StreamRefusedError) {
      err.write(`svc tail: refused by ${args.url}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}
