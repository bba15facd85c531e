import { ConfigError, keyPrefix, loadConfig, type Config } from '../config.js';
import { isKeysSubcommand, keysCommand, KEYS_USAGE } from './keys.js';
import { BACKUP_USAGE, MIGRATE_STORE_USAGE, RESTORE_USAGE } from './backup.js';
import { CHANGES_USAGE } from './changes.js';
import { Refused } from '../transfer/report.js';
import { EXPORT_USAGE } from './export.js';
import { REPLAY_USAGE } from './replay.js';
import { isReportersSubcommand, REPORTERS_USAGE } from './reporters-usage.js';
import { STANDINGS_USAGE } from './standings.js';
import { TAIL_USAGE } from './tail.js';
import { parseOptions, UsageError, wantsHelp } from './usage.js';

// Each command's code is imported when that command runs: a client command (tail, changes, a
// usage error) does not load the server, the store and their drivers, which took most of its
// start-up (bench/history/2026-11-28.md "CLI start-up").

const HELP = `svc — sports scoring data service
usage: svc <command> [options]      (svc <command> --help for its options)
  serve                    run the service (REST, stream, webhooks, simulator)
  import                   import the archive (idempotent)
  keys create|list|revoke  manage API keys
  reporters                list, suspend or restore the crowd's reporters (admin key)
  tail                     print live events from the stream
  replay <game_id>         replay a final game for your key and print its events
  changes [--follow]       print the change feed (competitions and events as they change)
  standings --league L     print a season's standings as tables
  simulate                 run the live simulator against a running service
  export                   write an NDJSON export to a file
  secrets rotate-key       re-encrypt webhook secrets under a new SVC_SECRET_KEY
  backup <file>            copy the running node's SQLite database, consistently
  restore <file>           put a backup in place in a stopped node's data dir
  migrate-store --to URL   copy a node's SQLite database into PostgreSQL, for a cluster
  help [command]           this text, or a command's
Configuration comes from SVC_* environment variables (README, docs/operations.md).`;

const USAGE: Record<string, string> = {
  serve: `usage: svc serve
Runs the service in one process: REST API, WebSocket stream, webhook deliveries, consensus and
the live simulator, configured by SVC_* environment variables (README). The sandbox creates a
demo key on the first start of a data dir and prints it again on later ones; production creates
none. SIGTERM drains and exits within 10 s; a second SIGTERM exits at once.`,
  import: `usage: svc import
Imports the archive into the configured database (SVC_DATA_DIR or SVC_DATABASE_URL); a second run
changes nothing.`,
  keys: KEYS_USAGE.keys,
  reporters: REPORTERS_USAGE.reporters,
  tail: TAIL_USAGE,
  replay: REPLAY_USAGE,
  changes: CHANGES_USAGE,
  standings: STANDINGS_USAGE,
  simulate: '',
  export: EXPORT_USAGE,
  secrets: '',
  backup: BACKUP_USAGE,
  restore: RESTORE_USAGE,
  'migrate-store': MIGRATE_STORE_USAGE,
  help: 'usage: svc help [command]',
};

/** A command's help; the two whose text lives beside their heavy code load it. */
async function usageOf(cmd: string): Promise<string> {
  if (cmd === 'simulate') return (await import('../sim/cli.js')).SIMULATE_USAGE;
  if (cmd === 'secrets') return (await import('./secrets.js')).SECRETS_USAGE;
  return USAGE[cmd];
}

type Out = { write(s: string): unknown };

/** Runs one command line; every outcome is an exit code, a usage error is one line and 2. */
async function main(argv: string[], stdout: Out, stderr: Out): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h') {
    stdout.write(`${HELP}\n`);
    return 0;
  }
  if (cmd === 'help') {
    if (wantsHelp(rest)) {
      stdout.write(`${USAGE.help}\n`);
      return 0;
    }
    const topic = rest[0];
    if (topic !== undefined && !(topic in USAGE)) return usageError(stderr, 'svc help', new UsageError(`unknown command '${topic}'`), 'svc --help');
    stdout.write(`${topic === undefined ? HELP : await usageOf(topic)}\n`);
    return 0;
  }
  if (!(cmd in USAGE)) return usageError(stderr, 'svc', new UsageError(`unknown command '${cmd}'`), 'svc --help');
  const [sub] = rest;
  if (wantsHelp(rest)) {
    stdout.write(`${cmd === 'keys' && isKeysSubcommand(sub) ? KEYS_USAGE[sub] : cmd === 'reporters' && isReportersSubcommand(sub) ? REPORTERS_USAGE[sub] : await usageOf(cmd)}\n`);
    return 0;
  }
  const name = (cmd === 'keys' && isKeysSubcommand(sub)) || (cmd === 'reporters' && isReportersSubcommand(sub)) ? `svc ${cmd} ${sub}` : `svc ${cmd}`;
  const hint = `${name} --help`;
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      stderr.write(`svc: invalid configuration: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  try {
    switch (cmd) {
      case 'serve': {
        parseOptions(rest, {});
        const { serve } = await import('../process/serve.js');
        await serve(config);
        return -1;
      }
      case 'import': {
        parseOptions(rest, {});
        const [{ openStore }, { runImport }, { systemClock }] = await Promise.all([import('../secrets/key.js'), import('../archive/run-import.js'), import('../domain/clock.js')]);
        const { db } = await openStore(config);
        try {
          await runImport(db, systemClock, (l) => stdout.write(`${l}\n`));
        } finally {
          await db.close();
        }
        return 0;
      }
      case 'keys': {
        if (!isKeysSubcommand(sub)) throw new UsageError(sub === undefined ? 'which subcommand? create, list or revoke' : `unknown subcommand '${sub}' (create, list or revoke)`);
        const [{ openStore }, { KeyRepo }] = await Promise.all([import('../secrets/key.js'), import('../store/accounts/keys.js')]);
        const { db } = await openStore(config);
        try {
          stdout.write(`${await keysCommand(rest, new KeyRepo(db, config.env, keyPrefix(config.env)), new Date())}\n`);
          return 0;
        } finally {
          await db.close();
        }
      }
      case 'tail': {
        const { parseTailArgs, tailCommand } = await import('./tail.js');
        return await tailCommand(parseTailArgs(rest, config, process.env), stdout, stderr);
      }
      case 'replay': {
        const { parseReplayArgs, replayCommand } = await import('./replay.js');
        return await replayCommand(parseReplayArgs(rest, config, process.env), stdout, stderr);
      }
      case 'changes': {
        const { changesCommand, parseChangesArgs } = await import('./changes.js');
        const args = parseChangesArgs(rest, config, process.env);
        const stop = new AbortController();
        const onSigint = () => stop.abort();
        process.once('SIGINT', onSigint);
        try {
          return await changesCommand(args, stdout, stderr, stop.signal);
        } finally {
          process.off('SIGINT', onSigint);
        }
      }
      case 'reporters': {
        const { parseReportersArgs, reportersCommand } = await import('./reporters.js');
        return await reportersCommand(parseReportersArgs(rest, config, process.env), stdout, stderr);
      }
      case 'standings': {
        const { parseStandingsArgs, standingsCommand } = await import('./standings.js');
        return await standingsCommand(parseStandingsArgs(rest, config, process.env), stdout, stderr);
      }
      case 'simulate': {
        const { simulateCommand, SimulateUsageError } = await import('../sim/cli.js');
        return await simulateCommand(rest, config, (l) => stdout.write(`${l}\n`)).catch((e: unknown) => {
          throw e instanceof SimulateUsageError ? new UsageError(e.message) : e;
        });
      }
      case 'export': {
        const { exportCommand } = await import('./export.js');
        return await exportCommand(rest, config);
      }
      case 'secrets': {
        const { secretsCommand, SecretsUsageError } = await import('./secrets.js');
        const text = await secretsCommand(rest, config, process.env).catch((e: unknown) => {
          throw e instanceof SecretsUsageError ? new UsageError(e.message) : e;
        });
        stdout.write(`${text}\n`);
        return 0;
      }
      case 'backup': {
        const { backupCommand } = await import('./backup.js');
        return await backupCommand(rest, config, stdout, stderr);
      }
      case 'restore': {
        const { restoreCommand } = await import('./backup.js');
        return await restoreCommand(rest, config, stdout);
      }
      case 'migrate-store': {
        const { migrateStoreCommand } = await import('./backup.js');
        return await migrateStoreCommand(rest, config, stdout, stderr);
      }
      default:
        throw new UsageError(`unknown command '${cmd}'`);
    }
  } catch (e) {
    if (e instanceof UsageError) return usageError(stderr, name, e, hint);
    if (e instanceof Refused) {
      stderr.write(`${name}: ${e.message.split('\n')[0]}\n`);
      return 1;
    }
    throw e;
  }
}

function usageError(stderr: Out, name: string, e: Error, hint: string): number {
  stderr.write(`${name}: ${e.message} (see ${hint})\n`);
  return 2;
}

/** Anything else that goes wrong: one line, no stack (SVC_DEBUG=1 shows it), exit 1. */
function failed(err: unknown): never {
  // A configuration refused after the start began (SVC_SECRET_KEY missing or wrong): one line, exit 2.
  if (err instanceof ConfigError) {
    process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
    process.exit(2);
  }
  const message = err instanceof Error ? err.message : String(err);
  const stack = process.env.SVC_DEBUG && err instanceof Error && err.stack ? `\n${err.stack}` : '';
  process.stderr.write(`svc: ${message.split('\n')[0]}${stack}\n`);
  process.exit(1);
}

main(process.argv.slice(2), process.stdout, process.stderr).then((code) => {
  if (code >= 0) process.exit(code);
}, failed);
