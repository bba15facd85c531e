import { ConfigError, loadConfig, type Config } from './config.js';
import { keysCommand, UsageError } from './cli/keys.js';
import { systemClock } from './domain/clock.js';
import { openDb } from './store/db.js';
import { KeyRepo } from './store/keys.js';
import { keyPrefix } from './config.js';
import { serve } from './serve.js';
import { runImport } from './cli/import.js';
import { simulateCommand, SimulateUsageError } from './sim/cli.js';
import { exportCommand } from './cli/export.js';

const HELP = `svc — sports scoring data service
usage: svc <command>
  serve                  run the service (REST, stream, webhooks, simulator)
  import                 import the archive (idempotent)
  keys create|list|revoke  manage API keys
  simulate               run the live simulator against a running service
  export                 write an NDJSON export to a file`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`svc: invalid configuration: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  switch (cmd) {
    case 'serve':
      await serve(config);
      return -1;
    case 'import': {
      const db = await openDb(config);
      try {
        await runImport(db, systemClock, (l) => process.stdout.write(`${l}\n`));
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'keys': {
      const db = await openDb(config);
      try {
        const out = await keysCommand(rest, new KeyRepo(db, config.env, keyPrefix(config.env)), new Date());
        process.stdout.write(`${out}\n`);
        return 0;
      } catch (e) {
        if (e instanceof UsageError) {
          process.stderr.write(`svc keys: ${e.message}\n`);
          return 2;
        }
        throw e;
      } finally {
        await db.close();
      }
    }
    case 'simulate':
      try {
        return await simulateCommand(rest, config, (l) => process.stdout.write(`${l}\n`));
      } catch (e) {
        if (e instanceof SimulateUsageError) {
          process.stderr.write(`svc simulate: ${e.message}\n`);
          return 2;
        }
        throw e;
      }
    case 'export':
      return exportCommand(rest, config);
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(`${HELP}\n`);
      return 0;
    default:
      process.stderr.write(`svc: unknown command '${cmd}'\n${HELP}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`svc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
