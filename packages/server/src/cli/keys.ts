import { parseArgs } from 'node:util';
import { PRODUCTS, SPORTS, type Product } from '@svc/schema';
import { PLAN_NAMES } from '../domain/plans.js';
import type { KeyRepo } from '../store/keys.js';

const isProduct = (p: string): p is Product => PRODUCTS.some((x) => x === p);
const csv = (v: string | undefined): string[] | null =>
  v === undefined || v === '' || v === '*' ? null : v.split(',').map((s) => s.trim()).filter(Boolean);

export class UsageError extends Error {}

/** `svc keys create|list|revoke`. Returns the text to print. */
export async function keysCommand(argv: string[], keys: KeyRepo, now: Date): Promise<string> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string', default: 'free' },
      products: { type: 'string', default: 'live,archive' },
      sports: { type: 'string' },
      leagues: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (sub === 'create') {
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
    const all = await keys.list();
    if (values.json) return JSON.stringify(all);
    return all
      .map((k) => `${k.id}  ${k.prefix}…  ${k.name}  ${k.plan}  ${k.products.join(',')}  ${k.sports?.join(',') ?? '*'}  ${k.revoked_at ? 'revoked' : 'active'}`)
      .join('\n');
  }
  if (sub === 'revoke') {
    const id = positionals[0];
    if (!id) throw new UsageError('usage: svc keys revoke <key id>');
    const done = await keys.revoke(id, now);
    if (!done) throw new UsageError(`no active key '${id}'`);
    return values.json ? JSON.stringify({ id, revoked: true }) : `Revoked ${id}.`;
  }
  throw new UsageError('usage: svc keys create --name <n> [--plan free|pro|enterprise|internal] [--products live,archive] [--sports soccer,...] [--leagues wc,...] [--json] | list | revoke <id>');
}
