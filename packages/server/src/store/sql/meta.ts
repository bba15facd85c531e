import type { Kysely } from 'kysely';
import type { Db } from './db.js';
import type { Database, MetaTable } from './database.js';

/** A key's value, on the service's handle or inside a caller's transaction (a bulk load's). */
export async function metaValue(k: Kysely<Database>, key: string): Promise<string | undefined> {
  const row = await k.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/** Stores `value` under `key`, failing when the key is taken (unlike `MetaRepo.claim`). */
export async function insertMeta(k: Kysely<Database>, key: string, value: string): Promise<void> {
  await k.insertInto('meta').values({ key, value }).execute();
}

/** Stores `value` under `key`, replacing what was there. */
export async function setMeta(k: Kysely<Database>, key: string, value: string): Promise<void> {
  await k.insertInto('meta').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}

/**
 * Rows of `meta`: small keyed values shared by every process on the database, such as a
 * simulator's claim on a game or the secret its keys derive from, and what a bulk load imported
 * (store/reference/archive-load.ts). The primary key on `key` makes the first writer of a key win on both
 * engines and across nodes.
 */
export class MetaRepo {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    return metaValue(this.db.kysely, key);
  }

  /** The rows among `keys` that exist, in no particular order. */
  async getMany(keys: readonly string[]): Promise<MetaTable[]> {
    if (keys.length === 0) return [];
    return this.db.kysely.selectFrom('meta').selectAll().where('key', 'in', [...keys]).execute();
  }

  /** Stores `value` under `key`; throws when the key is taken. */
  async insert(key: string, value: string): Promise<void> {
    await insertMeta(this.db.kysely, key, value);
  }

  /** Stores `value` under `key` unless the key is taken; true when this call stored it. */
  async claim(key: string, value: string): Promise<boolean> {
    const won = await this.db.kysely
      .insertInto('meta')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    return won !== undefined;
  }

  async release(key: string): Promise<void> {
    await this.db.kysely.deleteFrom('meta').where('key', '=', key).execute();
  }
}
