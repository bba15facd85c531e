import type { Product } from '@svc/schema';
import { PRODUCTS } from '@svc/schema';
import { displayPrefix, generateKey, hashKey, randomBase62 } from '../../domain/keys.js';
import { planOf } from '../../domain/plans.js';
import type { Principal } from '../../domain/scopes.js';
import type { Db } from '../sql/db.js';
import type { ApiKeyTable } from './types.js';

export interface NewKey {
  name: string;
  plan: string;
  products: readonly Product[];
  sports?: readonly string[] | null;
  leagues?: readonly string[] | null;
}

export interface KeySummary {
  id: string;
  name: string;
  prefix: string;
  environment: string;
  plan: string;
  products: Product[];
  sports: string[] | null;
  leagues: string[] | null;
  created_at: string;
  revoked_at: string | null;
}

const isProduct = (p: string): p is Product => PRODUCTS.some((x) => x === p);
const list = (s: string | null): string[] | null => (s === null ? null : JSON.parse(s));

function summary(r: ApiKeyTable): KeySummary {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    environment: r.environment,
    plan: r.plan,
    products: (JSON.parse(r.products) as string[]).filter(isProduct),
    sports: list(r.sports),
    leagues: list(r.leagues),
    created_at: r.created_at,
    revoked_at: r.revoked_at,
  };
}

export function principalOf(k: KeySummary): Principal {
  return {
    keyId: k.id,
    name: k.name,
    environment: k.environment,
    plan: planOf(k.plan),
    products: k.products,
    sports: k.sports,
    leagues: k.leagues,
  };
}

export class KeyRepo {
  constructor(
    private readonly db: Db,
    private readonly environment: string,
    private readonly prefix: string,
  ) {}

  /** Creates a key and returns it in full: the only time the plaintext exists. */
  async create(input: NewKey, now: Date, plaintext?: string): Promise<{ key: string; record: KeySummary }> {
    planOf(input.plan);
    const key = plaintext ?? generateKey(this.prefix);
    const row: ApiKeyTable = {
      id: `key_${randomBase62(16)}`,
      name: input.name,
      hash: hashKey(key),
      prefix: displayPrefix(key),
      environment: this.environment,
      plan: input.plan,
      products: JSON.stringify(input.products),
      sports: input.sports ? JSON.stringify(input.sports) : null,
      leagues: input.leagues ? JSON.stringify(input.leagues) : null,
      created_at: now.toISOString(),
      revoked_at: null,
    };
    await this.db.kysely.insertInto('api_keys').values(row).execute();
    return { key, record: summary(row) };
  }

  /** SVC_BOOTSTRAP_KEY: exists with every product on the internal plan, created if missing. */
  async ensureBootstrap(key: string, now: Date): Promise<void> {
    const found = await this.db.kysely.selectFrom('api_keys').select('id').where('hash', '=', hashKey(key)).executeTakeFirst();
    if (found) return;
    await this.create({ name: 'bootstrap', plan: 'internal', products: [...PRODUCTS] }, now, key);
  }

  /**
   * Makes sure this exact key exists, creating it with `input` if it does not, and returns its
   * record (possibly revoked: an operator's revocation stands). Safe when processes race.
   */
  async ensureKey(plaintext: string, input: NewKey, now: Date): Promise<KeySummary> {
    const hash = hashKey(plaintext);
    const found = await this.findByHash(hash);
    if (found) return found.key;
    try {
      return (await this.create(input, now, plaintext)).record;
    } catch (e) {
      // Another process created it between the lookup and the insert (unique hash).
      const again = await this.findByHash(hash);
      if (again) return again.key;
      throw e;
    }
  }

  async findByHash(hash: string): Promise<{ key: KeySummary; hash: string } | undefined> {
    const row = await this.db.kysely.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && { key: summary(row), hash: row.hash };
  }

  /** A key by its id, revoked or not (a stream token names its key by id). */
  async findById(id: string): Promise<KeySummary | undefined> {
    const row = await this.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && summary(row);
  }

  /** Which of these key ids still exist unrevoked: one query per 500 ids (open streams re-check theirs). */
  async activeIds(ids: readonly string[]): Promise<Set<string>> {
    const active = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.kysely
        .selectFrom('api_keys')
        .select('id')
        .where('id', 'in', ids.slice(i, i + 500))
        .where('revoked_at', 'is', null)
        .execute();
      for (const r of rows) active.add(r.id);
    }
    return active;
  }

  async list(): Promise<KeySummary[]> {
    const rows = await this.db.kysely.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(summary);
  }

  async revoke(id: string, now: Date): Promise<boolean> {
    const res = await this.db.kysely
      .updateTable('api_keys')
      .set({ revoked_at: now.toISOString() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}
