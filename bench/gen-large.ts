// The large archive for benchmarks: a synthetic basketball league of N events on top of the real
// archive, reproducible from a seed. A second run with the same options is a no-op.
// Run: node --import tsx bench/gen-large.ts --events 1000000 --seed 42 --data-dir bench/.out/large
//  or: node --import tsx bench/gen-large.ts --events 1000000 --database-url postgres://postgres@127.0.0.1:5432/svc_large
// Options: --league xbl  --seasons 26  --first-season 2000  --no-archive (skip the real archive)
import path from 'node:path';
import { importArchive, generateLarge, LargeUsageError, type LargeOptions, isoDate, openDb } from '@svc/server';

export interface GenArgs extends Omit<LargeOptions, 'today' | 'log'> {
  dataDir: string;
  databaseUrl: string | null;
  archive: boolean;
}

const USAGE = 'usage: gen-large.ts --events N [--seed 42] [--league xbl] [--seasons 26] [--first-season 2000] (--data-dir DIR | --database-url postgres://…) [--no-archive]';

export function parseGenArgs(argv: string[]): GenArgs {
  const out: GenArgs = { league: 'xbl', events: 1_000_000, seasons: 26, firstSeason: 2000, seed: 42, dataDir: 'bench/.out/large', databaseUrl: null, archive: true };
  const int = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n)) throw new LargeUsageError(`${flag} needs an integer\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--no-archive') {
      out.archive = false;
      continue;
    }
    const v = argv[++i];
    if (flag === '--events') out.events = int(flag, v);
    else if (flag === '--seed') out.seed = int(flag, v);
    else if (flag === '--seasons') out.seasons = int(flag, v);
    else if (flag === '--first-season') out.firstSeason = int(flag, v);
    else if (flag === '--league' && v) out.league = v;
    else if (flag === '--data-dir' && v) out.dataDir = v;
    else if (flag === '--database-url' && v) out.databaseUrl = v;
    else throw new LargeUsageError(`bad option '${flag}'\n${USAGE}`);
  }
  return out;
}

/** Opens (creating and migrating) the target, imports the real archive once, adds the league. */
export async function genLarge(args: GenArgs, log: (line: string) => void): Promise<void> {
  const db = await openDb({ dataDir: path.resolve(args.dataDir), databaseUrl: args.databaseUrl });
  try {
    const today = isoDate(Date.now());
    if (args.archive) await importArchive(db, { today, log });
    const s = await generateLarge(db, { ...args, today, log });
    log(
      s.skipped
        ? `large: ${args.league} already generated with these options`
        : `large: ${s.league}: ${s.seasons} seasons, ${s.competitions} games, ${s.plays} plays, ${s.events} events in ${(s.ms / 1000).toFixed(1)} s (${db.engine})`,
    );
  } finally {
    await db.close();
  }
}

const invoked = process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (invoked) {
  genLarge(parseGenArgs(process.argv.slice(2)), (l) => process.stdout.write(`${l}\n`)).catch((e: unknown) => {
    process.stderr.write(`gen-large: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof LargeUsageError ? 2 : 1);
  });
}
