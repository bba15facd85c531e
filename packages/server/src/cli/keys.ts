import { PRODUCTS, SPORTS, type Product } from '@svc/schema';
import { PLAN_NAMES } from '../domain/plans.js';
import type { KeyRepo, KeySummary } from '../store/accounts/keys.js';
import { parseOptions, UsageError } from './usage.js';

export { UsageError };

export const KEYS_USAGE = {
  keys: `usage: svc keys <create|list|revoke> [options]
  create   make a key and print it once
  list     every key (never the key itself), as a table or --json
  revoke   revoke a key by id
svc keys <subcommand> --help shows its options.`,
  create: `usage: svc keys create --name NAME [--plan free|pro|enterprise|internal] [--products live,archive]
                       [--sports soccer,...] [--leagues wc,...] [--json]
  --name      who the key is for (required)
  --plan      rate limits and stream connections (default free)
  --products  comma list of ${PRODUCTS.join(', ')}; '*' for all (default live,archive)
  --sports    comma list of sports the key may read (default all)
  --leagues   comma list of leagues the key may read (default all)
  --json      print the key and its record as JSON
The key is printed once: svc stores only its SHA-256 hash.`,
  list: `usage: svc keys list [--json]
  --json      print the records as a JSON array instead of a table`,
  revoke: `usage: svc keys revoke KEY_ID [--json]
  KEY_ID      the key's id (key_…), as svc keys list shows it`,
};

export type KeysSubcommand = 'create' | 'list' | 'revoke';
export const isKeysSubcommand = (s: string | undefined): s is KeysSubcommand => s === 'create' || s === 'list' || s === 'revoke';

const isProduct = (p: string): p is Product => PRODUCTS.some((x) => x === p);
const csv = (v: string | undefined): string[] | null =>
  v === undefined || v === '' || v === '*' ? null : v.split(',').map((s) => s.trim()).filter(Boolean);

/** Rows as aligned columns under a header: what an operator reads in a terminal. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function keyTable(keys: KeySummary[]): string {
  if (keys.length === 0) return 'No keys yet: svc keys create --name NAME';
  return table(
    ['ID', 'PREFIX', 'NAME', 'PLAN', 'PRODUCTS', 'SPORTS', 'LEAGUES', 'CREATED', 'STATUS'],
    keys.map((k) => [
      k.id,
      `${k.prefix}…`,
      k.name,
      k.plan,
      k.products.join(','),
      k.sports?.join(',') ?? '*',
      k.leagues?.join(',') ?? '*',
      k.created_at.slice(0, 10),
      k.revoked_at ? `revoked ${k.revoked_at.slice(0, 10)}` : 'active',
    ]),
  );
}

/** `svc keys create|list|revoke`. Returns the text to print; bad arguments throw UsageError. */
export async function keysCommand(argv: string[], keys: KeyRepo, now: Date): Promise<string> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const { values } = parseOptions(rest, {
      name: { type: 'string' },
      plan: { type: 'string', default: 'free' },
      products: { type: 'string', default: 'live,archive' },
      sports: { type: 'string' },
      leagues: { type: 'string' },
      json: { type: 'boolean', default: false },
    });
    if (!values.name) throw new UsageError('--name is required');
    const plan = values.plan ?? 'free';
    if (!PLAN_NAMES.includes(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
    const products = csv(values.products) ?? [...PRODUCTS];
    const bad = products.find((p) => !isProduct(p));
    if (bad !== undefined) throw new UsageError(`unknown product '${bad}' (products: ${PRODUCTS.join(', ')})`);
    const sports = csv(values.sports);
    const badSport = sports?.find((s) => !SPORTS.some((x) => x === s));
    if (badSport !== undefined) throw new UsageError(`unknown sport '${badSport}' (sports: ${SPORTS.join(', ')})`);
    const { key, record } = await keys.create(
      { name: values.name, plan, products: products.filter(isProduct), sports, leagues: csv(values.leagues) },
      now,
    );
    if (values.json) return JSON.stringify({ key, ...record });
    return `Created ${record.id} (${record.plan}; products ${record.products.join(',')}).\nKey (shown once, store it now): ${key}`;
  }
  if (sub === 'list') {
    const { values } = parseOptions(rest, { json: { type: 'boolean', default: false } });
    const all = await keys.list();
    return values.json ? JSON.stringify(all) : keyTable(all);
  }
  if (sub === 'revoke') {
    const { values, positionals } = parseOptions(rest, { json: { type: 'boolean', default: false } }, 1);
    const id = positionals[0];
    if (!id) throw new UsageError('which key? svc keys revoke KEY_ID');
    const done = await keys.revoke(id, now);
    if (!done) throw new UsageError(`no active key '${id}'`);
    return values.json ? JSON.stringify({ id, revoked: true }) : `Revoked ${id}.`;
  }
  throw new UsageError(sub === undefined ? 'which subcommand? create, list or revoke' : `unknown subcommand '${sub}' (create, list or revoke)`);
}
