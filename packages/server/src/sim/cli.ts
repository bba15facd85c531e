import { localBaseUrl, type Config } from '../config.js';
import { openDb } from '../store/sql/db.js';
import { IngestClient } from './client.js';
import { startSimulator, type Simulator } from './index.js';
import { DEFAULT_SPEED } from './plan.js';

export const SIMULATE_USAGE = `usage: svc simulate [--url http://127.0.0.1:8080] [--speed 10]
Runs the live simulator against a running service (same SVC_DATA_DIR / SVC_DATABASE_URL), until Ctrl-C.
  --url     the service (default from SVC_HOST and SVC_PORT)
  --speed   game clock multiplier, 1 to 100000 (default 10)`;

export class SimulateUsageError extends Error {}

export interface SimulateArgs {
  url: string;
  speed: number;
}


export function parseSimulateArgs(argv: string[], config: Config): SimulateArgs {
  const out: SimulateArgs = { url: localBaseUrl(config.host, config.port), speed: DEFAULT_SPEED };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (flag !== '--url' && flag !== '--speed') throw new SimulateUsageError(`unknown option '${flag}'`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new SimulateUsageError(`${flag} needs a value`);
    if (flag === '--url') {
      if (!/^https?:\/\/[^/]+\/?$/.test(value)) throw new SimulateUsageError(`--url must be a base URL like http://127.0.0.1:8080, got '${value}'`);
      out.url = value.replace(/\/$/, '');
    } else {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 1 || n > 100_000) throw new SimulateUsageError(`--speed must be a number from 1 to 100000, got '${value}'`);
      out.speed = n;
    }
  }
  return out;
}

/**
 * `svc simulate`: runs the simulator against a service that is already running. It opens the
 * same database (same SVC_DATA_DIR / SVC_DATABASE_URL) to derive the simulator's keys and to pick
 * games; everything it reports goes over HTTP. Runs until SIGINT / SIGTERM.
 */
export async function simulateCommand(argv: string[], config: Config, print: (line: string) => void): Promise<number> {
  const args = parseSimulateArgs(argv, config);
  const probe = new IngestClient(args.url);
  try {
    const health = await probe.get('/healthz');
    if (health.status !== 200) throw new Error(`GET /healthz answered ${health.status}`);
  } catch (e) {
    print(`svc simulate: no svc service at ${args.url} (${e instanceof Error ? e.message : String(e)}); start one with \`npm start\` or pass --url`);
    return 1;
  } finally {
    await probe.close();
  }
  const db = await openDb(config);
  let sim: Simulator | undefined;
  try {
    sim = await startSimulator({ baseUrl: args.url, db, config, speed: args.speed, log: (l) => print(`sim: ${l}`) });
    const live = sim.games().filter((g) => g.state === 'running');
    print(`svc simulate: ${args.speed}× against ${args.url}; live now: ${live.map((g) => `${g.gameId} (${g.home} v ${g.away})`).join(', ') || 'none'}. Ctrl-C stops.`);
    // The simulator's own timers never hold a process open; this one does, until a signal.
    const hold = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    clearInterval(hold);
    return 0;
  } finally {
    await sim?.stop();
    await db.close();
  }
}
