import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad command line: printed as one line on stderr, exit 2 (docs/operations.md). */
export class UsageError extends Error {}

/** `-h` or `--help` anywhere before a `--`. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util's parseArgs in strict mode, its errors turned into one-line usage errors. The node
 * message's first sentence is what a person needs ("Unknown option '--x'"); the rest explains `--`.
 */
export function parseOptions<O extends Options>(argv: string[], options: O, maxPositionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new UsageError(message.split(/\.(\s|$)/)[0].replace(/\s+/g, ' '));
  }
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`unexpected argument '${parsed.positionals[maxPositionals]}'`);
  return parsed;
}
