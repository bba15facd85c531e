import { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { runImport } from './cli/import.js';
import type { Config } from './config.js';
import { systemClock } from './domain/clock.js';
import { keyFilePath, openStore } from './secrets/key.js';
import { RedisBus } from './bus/redis-bus.js';
import { redisKeys } from './bus/redis-keys.js';
import { startBackground } from './worker.js';
import { startSimulator, type Simulator } from './sim/index.js';
import { localBaseUrl } from './sim/cli.js';

/** `svc serve`: everything in one process (or one role of it), on the configured store. */
export async function serve(given: Config): Promise<void> {
  const clock = systemClock;
  const { db, config, keySource } = await openStore(given, { backgroundCheckpoint: true });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : null;
  const print = (line: string) => process.stdout.write(`${line}\n`);

  await runImport(db, clock, (l) => print(`svc: ${l}`));
  const bus = redis ? new RedisBus(redis, redis.duplicate(), redisKeys(config.redisPrefix)) : undefined;
  const { app, services } = await buildApp(
    { config, db, clock, redis, bus },
    { log: { level: config.logLevel } },
  );
  if (config.bootstrapKey) await services.keys.ensureBootstrap(config.bootstrapKey, new Date(clock.now()));
  // The operator's own key is never echoed: the banner names the variable that holds it.
  const demo = config.bootstrapKey
    ? '$SVC_BOOTSTRAP_KEY'
    : (await services.keys.create({ name: 'demo (npm start)', plan: 'pro', products: ['live', 'archive', 'report', 'source'] }, new Date(clock.now()))).key;

  await app.listen({ port: config.port, host: config.host });
  const stopWorker = startBackground(config.role, services, app.log);
  const base = `http://${config.host}:${config.port}`;
  print(`
svc is running on ${base} (${config.env}, ${db.engine}${redis ? `, redis cluster bus under '${config.redisPrefix}'` : ''})
  API key${config.bootstrapKey ? ':                ' : ' (shown once):  '}${demo}
  docs:                  ${base}/docs
  dashboard:             ${base}/dashboard
  status page:           ${base}/status
  secret key:            ${keySource === 'env' ? 'SVC_SECRET_KEY' : `${keyFilePath(config.dataDir)}${keySource === 'generated' ? ' (generated now; keep it with the database)' : ''}`}

  curl -H "Authorization: Bearer ${demo}" "${base}/v1/competitions?league=wc&season=2022&limit=3"
  curl -H "Authorization: Bearer ${demo}" "${base}/v1/games?date=today"
  wscat -H "Authorization: Bearer ${demo}" -c "ws://${config.host}:${config.port}/v1/stream"
`);

  // The live simulator feeds today's games through this node's own HTTP API. In a split cluster
  // it runs beside the worker duties, not on the scaled-out api nodes; claims in the database
  // keep several simulators from replaying the same game.
  let sim: Simulator | null = null;
  if (config.simulator && config.role !== 'api') {
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    try {
      sim = await startSimulator({ baseUrl: localBaseUrl(config.host, port), db, config, clock, log: (l) => app.log.info({ simulator: true }, l) });
      const live = sim.games().filter((g) => g.state === 'running').map((g) => `${g.gameId} ${g.home} v ${g.away}`);
      print(`simulator: on at ${sim.speed}×, live now: ${live.join(', ') || 'none'} (basketball scores every few seconds, soccer goals minutes apart); a new game every 60 s; SVC_SIMULATOR=off turns it off`);
    } catch (err) {
      print(`simulator: failed to start: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const stop = async () => {
    await sim?.stop();
    await stopWorker();
    await app.close();
    await bus?.close();
    await db.close();
    redis?.disconnect();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
