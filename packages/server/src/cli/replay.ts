import { localBaseUrl, type Config } from '../config.js';
import { readDemoKey } from '../process/demo-key.js';
import { openEventStream, StreamRefusedError } from './event-stream.js';
import { formatEvent } from './tail.js';
import { parseOptions, UsageError } from './usage.js';

export const REPLAY_USAGE = `usage: svc replay <game_id> [--speed N] [--url http://127.0.0.1:8080] [--key KEY] [--json] [--keep]
Replays a final game (e.g. soccer_21728, the 2022 World Cup final) through the live pipeline as a
game of its own, visible to your key alone, and prints its events as they come, like svc tail,
until the replay ends. Ctrl-C cancels the replay (with --keep it goes on without you).
  --speed     game time runs N times faster than real time, 1–600 (default 60)
  --url       the service (default from SVC_HOST and SVC_PORT)
  --key       a sandbox key with the live product (default $SVC_API_KEY, else the sandbox demo key of SVC_DATA_DIR)
  --json      one event per line as the stream sends it
  --keep      on Ctrl-C, leave the replay running`;

export interface ReplayArgs {
  url: string;
  key: string;
  gameId: string;
  speed: number | undefined;
  json: boolean;
  keep: boolean;
}

export function parseReplayArgs(argv: string[], config: Config, env: Record<string, string | undefined>): ReplayArgs {
  const { values, positionals } = parseOptions(
    argv,
    {
      speed: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      json: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
    1,
  );
  if (positionals.length === 0) throw new UsageError('which game? e.g. svc replay soccer_21728');
  let speed: number | undefined;
  if (values.speed !== undefined) {
    speed = Number(values.speed);
    if (!/^\d+$/.test(values.speed) || speed < 1 || speed > 600) throw new UsageError(`--speed must be a whole number from 1 to 600, got '${values.speed}'`);
  }
  const url = (values.url ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new UsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${url}'`);
  const key = values.key ?? env.SVC_API_KEY ?? readDemoKey(config);
  if (!key) throw new UsageError('no key: pass --key, set SVC_API_KEY, or start the sandbox once (npm start) to create its demo key');
  return { url, key, gameId: positionals[0], speed, json: values.json ?? false, keep: values.keep ?? false };
}

interface ReplayRecord {
  id: string;
  game_id: string;
  source_game_id: string;
  speed: number;
  status: string;
  reason: string | null;
}

type Out = { write(s: string): unknown };

/** The service's answer, or its error as one line. */
async function call(args: ReplayArgs, method: string, path: string, body?: unknown): Promise<{ ok: true; data: ReplayRecord } | { ok: false; line: string }> {
  let res: Response;
  try {
    res = await fetch(`${args.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${args.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    return { ok: false, line: `no svc service at ${args.url}` };
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not the service's JSON: reported with the status below.
  }
  const data = field(json, 'data');
  if (res.ok && isReplay(data)) return { ok: true, data };
  const error = field(json, 'error');
  const code = field(error, 'code');
  const message = field(error, 'message');
  return { ok: false, line: typeof code === 'string' ? `HTTP ${res.status} ${code}: ${String(message)}` : `HTTP ${res.status} from ${args.url}` };
}

/** A member of a parsed JSON object, or undefined. */
function field(v: unknown, name: string): unknown {
  if (typeof v !== 'object' || v === null) return undefined;
  const member: unknown = Object.getOwnPropertyDescriptor(v, name)?.value;
  return member;
}

function isReplay(v: unknown): v is ReplayRecord {
  const reason = field(v, 'reason');
  return (
    typeof field(v, 'id') === 'string' &&
    typeof field(v, 'game_id') === 'string' &&
    typeof field(v, 'source_game_id') === 'string' &&
    typeof field(v, 'speed') === 'number' &&
    typeof field(v, 'status') === 'string' &&
    (reason === null || typeof reason === 'string')
  );
}

/** How often the replay's status is read, to end when it ends. */
const STATUS_POLL_MS = 1000;
/** After the replay ends, frames still on their way get this long to arrive. */
const DRAIN_MS = 1000;

/**
 * `svc replay`: starts the replay, then prints its game's events from the stream until it is
 * finished or cancelled (exit 0); exit 1 when the service refuses. Ctrl-C cancels the replay.
 */
export async function replayCommand(args: ReplayArgs, out: Out, err: Out): Promise<number> {
  const created = await call(args, 'POST', '/v1/replays', { game_id: args.gameId, ...(args.speed !== undefined ? { speed: args.speed } : {}) });
  if (!created.ok) {
    err.write(`svc replay: refused by ${args.url}: ${created.line}\n`);
    return 1;
  }
  const replay = created.data;
  err.write(`svc replay: ${replay.id} replays ${replay.source_game_id} as ${replay.game_id} at ${replay.speed}×; only your key sees it (Ctrl-C ${args.keep ? 'stops printing' : 'cancels it'})\n`);
  const stream = openEventStream({
    baseUrl: args.url,
    apiKey: args.key,
    query: { game: replay.game_id },
    onNotice: (n) => {
      if (n.kind === 'error') err.write(`svc replay: ${String(n.frame.code)}: ${String(n.frame.message)}\n`);
      if (n.kind === 'reconnecting') err.write(`svc replay: connection closed (${n.code}); resuming in ${n.inMs} ms\n`);
    },
  });
  let interrupted = false;
  let ended: string | null = null;
  const stop = () => {
    interrupted = true;
    stream.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const poll = setInterval(() => {
    void call(args, 'GET', `/v1/replays/${replay.id}`).then((r) => {
      if (!r.ok || ended !== null || (r.data.status !== 'finished' && r.data.status !== 'cancelled')) return;
      ended = r.data.status === 'cancelled' ? `cancelled (${r.data.reason ?? 'no reason given'})` : 'finished';
      setTimeout(() => stream.close(), DRAIN_MS).unref();
    });
  }, STATUS_POLL_MS);
  try {
    for await (const e of stream) out.write(`${args.json ? JSON.stringify(e) : formatEvent(e)}\n`);
    if (interrupted && ended === null && !args.keep) {
      const cancelled = await call(args, 'DELETE', `/v1/replays/${replay.id}`);
      err.write(cancelled.ok ? `svc replay: ${replay.id} cancelled\n` : `svc replay: could not cancel ${replay.id}: ${cancelled.line}\n`);
    } else err.write(`svc replay: ${replay.id} ${ended ?? 'goes on without you'}\n`);
    return 0;
  } catch (e) {
    if (e instanceof StreamRefusedError) {
      err.write(`svc replay: stream refused by ${args.url}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    clearInterval(poll);
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}
