import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { buildApp } from '../app.js';
import { runImport } from '../archive/run-import.js';
import { localBaseUrl, type Config } from '../config.js';
import { systemClock } from '../domain/clock.js';
import { keyFilePath, openStore } from '../secrets/key.js';
import { RedisBus } from '../bus/redis-bus.js';
import { redisOptions } from '../bus/link.js';
import { redisKeys } from '../bus/redis-keys.js';
import { startBackground } from './worker.js';
import { lowerHelperThreads } from './helper-threads.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { startKey, type StartKey } from './demo-key.js';
import { DELIVERY_GRACE_MS, exitOnSignals, type DrainLog } from './drain.js';
import { stdoutSink, type LogSink } from './log-sink.js';

/** Log lines before the app's logger exists, in the same JSON shape. */
const startLog = (sink: LogSink): DrainLog => ({
  info: (obj, msg) => sink.write(`${JSON.stringify({ level: 30, time: Date.now(), ...obj, msg })}\n`),
  error: (obj, msg) => sink.write(`${JSON.stringify({ level: 50, time: Date.now(), ...obj, msg })}\n`),
});

/** What `svc serve` prints for people, on stderr: stdout carries the JSON log lines only. */
function keyLines(k: StartKey, env: Config['env']): string {
  if (k.kind === 'bootstrap') return '  API key:               SVC_BOOTSTRAP_KEY (all products)';
  if (k.kind === 'none') return `  API key:               none created in ${env}; make one with \`svc keys create\``;
  return `  API key:               ${k.key}\n                         (sandbox demo key, ${k.created ? 'created now and kept' : 'kept'} in ${k.file})`;
}

/** How long a draining node answers with `Connection: close` before it closes the connections left idle. */
const KEEP_ALIVE_CLOSE_MS = 500;

/**
 * Closing the listener closes idle keep-alive connections at once, and a request a client is
 * sending on one at that moment is reset instead of answered. So a draining node first answers
 * with `Connection: close` for a moment (app.ts), which closes every busy connection after its
 * next answer, and only then closes what stayed idle. Without open connections there is nothing
 * to wait for (docs/operations.md, "Drain (SIGTERM)").
 */
async function closeKeepAliveGently(server: Server): Promise<void> {
  const open = await new Promise<number>((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
  if (open > 0) await new Promise((r) => setTimeout(r, KEEP_ALIVE_CLOSE_MS));
}

/** `svc serve`: everything in one process (or one role of it), on the configured store. */
export async function serve(given: Config): Promise<void> {
  const clock = systemClock;
  // Signals are handled from the first moment: a SIGTERM during the start exits cleanly too.
  let drain: (() => Promise<void>) | null = null;
  // Every log line of the process, the app's included: standard output that never blocks.
  const logSink = stdoutSink();
  let log: DrainLog = startLog(logSink);
  exitOnSignals(async () => drain?.(), { info: (o, m) => log.info(o, m), error: (o, m) => log.error(o, m) });
  // Threads started from here on are the event loop's own or lower themselves (the checkpointer).
  lowerHelperThreads(given.helperThreadNice);
  const { db, config, keySource } = await openStore(given, {
    backgroundCheckpoint: true,
    checkpointNice: given.helperThreadNice,
    // Message and code only: pg's error carries its client, whose connection parameters hold the password.
    onConnectionError: (err) => log.error({ code: 'code' in err ? String(err.code) : null, reason: err.message }, 'database: a pooled connection failed; the next query opens another'),
  });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, ...redisOptions() }) : null;
  const print = (line: string) => process.stderr.write(`${line}\n`);

  await runImport(db, clock, (l) => print(`svc: ${l}`));
  const bus = redis ? new RedisBus(redis, redis.duplicate(), redisKeys(config.redisPrefix)) : undefined;
  const { app, services } = await buildApp(
    { config, db, clock, redis, bus },
    { log: { level: config.logLevel, stream: logSink } },
  );
  const key = await startKey(config, services.keys, new Date(clock.now()));

  await app.listen({ port: config.port, host: config.host });
  const stopWorker = startBackground(config.role, services, app.log);
  let sim: Simulator | null = null;
  // SIGTERM drains (docs/operations.md): not ready, streams closed with 1001, no new connections,
  // in-flight requests answered and deliveries finished or released, then exit.
  log = app.log;
  drain = async () => {
    services.lifecycle.startDraining(clock.now());
    await sim?.stop();
    await closeKeepAliveGently(app.server);
    await Promise.all([app.close(), stopWorker(DELIVERY_GRACE_MS)]);
    await bus?.close();
    await db.close();
    redis?.disconnect();
  };
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const base = localBaseUrl(config.host, port);
  const shown = key.kind === 'demo' ? key.key : '$SVC_API_KEY';
  print(`
svc is running on ${base} (${config.env}, ${db.engine}${redis ? `, redis cluster bus under '${config.redisPrefix}'` : ''})
${keyLines(key, config.env)}
  docs:                  ${base}/docs
  dashboard:             ${base}/dashboard
  status page:           ${base}/status
  secret key:            ${keySource === 'env' ? 'SVC_SECRET_KEY' : `${keyFilePath(config.dataDir)}${keySource === 'generated' ? ' (generated now; keep it with the database)' : ''}`}

  curl -H "Authorization: Bearer ${shown}" "${base}/v1/competitions?league=wc&season=2022&limit=3"
  curl -H "Authorization: Bearer ${shown}" "${base}/v1/games?date=today"
  npm run svc -- tail --sport soccer,basketball
`);

  // The live simulator feeds today's games through this node's own HTTP API. In a split cluster
  // it runs beside the worker duties, not on the scaled-out api nodes; claims in the database
  // keep several simulators from replaying the same game.
  if (config.simulator && config.role !== 'api') {
    try {
      sim = await startSimulator({ baseUrl: localBaseUrl(config.host, port), db, config, clock, log: (l) => app.log.info({ simulator: true }, l) });
      const live = sim.games().filter((g) => g.state === 'running').map((g) => `${g.gameId} ${g.home} v ${g.away}`);
      print(`simulator: on at ${sim.speed}×, live now: ${live.join(', ') || 'none'} (basketball scores every few seconds, soccer goals minutes apart); a new game every 60 s; SVC_SIMULATOR=off turns it off`);
    } catch (err) {
      print(`simulator: failed to start: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

}
