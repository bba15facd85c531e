import type { Db } from './db.js';
import type { MetaTable } from './types.js';

/**
 * Rows of `meta`: small keyed values shared by every process on the database, such as a
 * simulator's claim on a game or the secret its keys derive from. The primary key on `key`
 * makes the first writer of a key win on both engines and across nodes.
 */
export class MetaRepo {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** The rows among `keys` that exist, in no particular order. */
  async getMany(keys: readonly string[]): Promise<MetaTable[]> {
    if (keys.length === 0) return [];
    return this.db.kysely.selectFrom('meta').selectAll().where('key', 'in', [...keys]).execute();
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
