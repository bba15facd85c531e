import { ConfigError, loadConfig, type Config } from './config.js';
import { keysCommand, UsageError } from './cli/keys.js';
import { systemClock } from './domain/clock.js';
import { openStore } from './secrets/key.js';
import { secretsCommand, SecretsUsageError } from './cli/secrets.js';
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
  export                 write an NDJSON export to a file
  secrets rotate-key     re-encrypt webhook secrets under a new SVC_SECRET_KEY`;

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
      const { db } = await openStore(config);
      try {
        await runImport(db, systemClock, (l) => process.stdout.write(`${l}\n`));
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'keys': {
      const { db } = await openStore(config);
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
    case 'secrets':
      try {
        process.stdout.write(`${await secretsCommand(rest, config, process.env)}\n`);
        return 0;
      } catch (e) {
        if (e instanceof SecretsUsageError) {
          process.stderr.write(`svc secrets: ${e.message}\n`);
          return 2;
        }
        throw e;
      }
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
    // A configuration refused after the start began (SVC_SECRET_KEY missing or wrong): one line.
    if (err instanceof ConfigError) {
      process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`svc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
